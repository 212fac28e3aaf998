/**
 * A read that would widen the conversation's audience (catching up on another channel into a
 * shared thread) goes to a person in reviewed mode: the reviewer sees a read and its arguments,
 * not who reads along, so it is never asked. The card offers no "always" option.
 */
import { describe, expect, it } from "vitest";
import { textStep, toolStep } from "../../support/scripted-provider.js";
import { collect, makeRequest, ofType } from "../helpers/harness.js";
import { peekChannel } from "../helpers/test-tools.js";
import { reviewedHarness, verdict } from "./support.js";

describe("a read that widens the audience, in reviewed mode", () => {
  it("is put to a person on a card; the reviewer is never called", async () => {
    const h = reviewedHarness([verdict("allow", "an ordinary look-up")], {
      extraTools: [peekChannel],
      steps: [toolStep(["c1", "peek_channel", { channel: "#secret" }]), textStep("done")],
    });
    const events = await collect(h.engine.run(makeRequest({ mode: "reviewed" })), (event) => {
      if (event.type === "permission-required") h.broker.approve(event.callId, "once");
    });
    expect(h.model.requests).toHaveLength(0);
    const cards = ofType(events, "permission-required");
    expect(cards.map((c) => c.callId)).toEqual(["c1"]);
    expect(cards[0]?.alwaysOptions).toEqual([]);
    expect(h.audit.find((r) => r.kind === "reviewer_skipped" && r.callId === "c1")?.reason).toMatch(
      /who reads along/,
    );
    expect(ofType(events, "tool-call-finished").find((e) => e.callId === "c1")?.status).toBe("ok");
  });

  it("a read that does not widen it runs without the reviewer or a card", async () => {
    const h = reviewedHarness([verdict("deny")], {
      extraTools: [peekChannel],
      steps: [toolStep(["c1", "peek_channel", { channel: "here" }]), textStep("done")],
    });
    const events = await collect(h.engine.run(makeRequest({ mode: "reviewed" })));
    expect(h.model.requests).toHaveLength(0);
    expect(ofType(events, "permission-required")).toHaveLength(0);
    expect(ofType(events, "tool-call-finished").find((e) => e.callId === "c1")?.status).toBe("ok");
  });
});
