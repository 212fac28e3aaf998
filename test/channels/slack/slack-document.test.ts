import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../../src/core/events.js";
import { AnswerSections } from "../../../src/channels/slack/slack-answer-sections.js";
import { layoutPages as layoutWith } from "../../../src/channels/slack/slack-document.js";
import { PAGE_BUDGET } from "../../../src/channels/slack/slack-limits.js";
import { EMPTY_TURN, foldTurn, type TurnView } from "../../../src/channels/shared/turn-view.js";
import { ev } from "./support.js";

const viewOf = (events: readonly AgentEvent[]): TurnView => events.reduce(foldTurn, EMPTY_TURN);
/** The layout as a live turn makes it. */
const layoutPages = (view: TurnView) => layoutWith(view, PAGE_BUDGET, new AnswerSections());

describe("layoutPages", () => {
  it("previews the answer on one line in the notification text, across the turn's messages", () => {
    const view = viewOf([
      ev.text("# Hi\n\nthere **you**"),
      ev.done("# Hi\n\nthere **you**"),
      ev.toolStart("c1", "npm test"),
      ev.toolEnd("c1"),
      ev.text("All\ngreen."),
      ev.completed("All\ngreen."),
    ]);
    const [page] = layoutPages(view);
    expect(page?.text).toBe("*Hi* there *you* All green.");
  });

  it("cuts a long preview, and says how the turn stands when there is no answer yet", () => {
    expect(layoutPages(viewOf([ev.text("x".repeat(500))]))[0]?.text).toBe(`${"x".repeat(299)}…`);
    expect(layoutPages(viewOf([ev.toolStart("c1", "npm test")]))[0]?.text).toBe("Working…");
  });

  it("escapes a failure in the notification text as in the blocks", () => {
    const [page] = layoutPages(
      viewOf([ev.error("upstream said: <!channel> <@U0CEO>"), ev.completed("", "error")]),
    );
    expect(page?.text).toBe(
      "Sorry — I couldn't finish this answer (upstream said: &lt;!channel&gt; &lt;@U0CEO&gt;). Press Retry to try again.",
    );
  });
});
