/**
 * End to end in reviewed mode on Slack: the real Bolt app on the fake Slack, the real session layer,
 * the agent and the reviewer both on the fake OpenAI server. Allow runs without a card; deny shows
 * the reviewer's reason to the person (the model gets only a short refusal) with "Allow anyway"
 * (a stranger is refused, the requester's press lets the exact call run once); unsure shows the
 * ordinary card; shadow mode collects statistics that `/coworker reviewer` reports.
 */
import { afterEach, describe, expect, it } from "vitest";
import { REVIEWER_DENIED_RESULT } from "../../../src/engine/reviewer/reviewed-ask.js";
import type { PermissionMode } from "../../../src/core/modes.js";
import type { FakeHandler } from "../../fakes/fake-openai.js";
import type { FakeMessage } from "../../fakes/fake-slack/index.js";
import {
  reviewedScript,
  reviewedStack,
  reviewerRequests,
  type ScriptVerdict,
} from "../../support/reviewer-e2e.js";
import {
  ANA,
  BEN,
  buttonId,
  type E2E,
  GENERAL,
  MENTION,
  messageWithButton,
  startE2E,
  thread,
} from "./e2e-harness.js";
import { blockTexts } from "./support.js";

let e2e: E2E;
afterEach(async () => e2e?.close());

function start(handler: FakeHandler, mode: PermissionMode, shadow = false): Promise<E2E> {
  return startE2E(handler, {}, ({ provider, openai, runs }) =>
    reviewedStack({ openai, provider, runs, mode, shadow }),
  );
}

const always = (verdict: ScriptVerdict) => reviewedScript(() => verdict);
const notes = () => e2e.runs.runs.filter((r) => r.tool === "write_note").map((r) => r.args.text);

function post(text: string, threadTs?: string): string {
  return e2e.fake.userPosts({
    user: ANA,
    channel: GENERAL,
    text: threadTs ? text : `${MENTION} ${text}`,
    ...(threadTs ? { threadTs } : {}),
  }).ts;
}

async function reply(ts: string, pattern: RegExp): Promise<string> {
  return e2e.fake.waitFor(
    () => thread(e2e.fake, GENERAL, ts).find((t) => pattern.test(t)),
    `a reply matching ${pattern}`,
  );
}

async function cardIn(ts: string, label: string): Promise<FakeMessage> {
  return e2e.fake.waitFor(() => messageWithButton(e2e.fake, GENERAL, ts, label), `a card with "${label}"`);
}

function press(user: string, card: FakeMessage, label: string): void {
  const actionId = buttonId(card, label);
  if (!actionId) throw new Error(`no "${label}" button`);
  e2e.fake.pressButton({ user, channel: GENERAL, messageTs: card.ts, actionId });
}

describe("Slack end to end: reviewed mode", () => {
  it("allow: no card, the call runs, the thread says the reviewer allowed it", async () => {
    e2e = await start(always("allow"), "reviewed");
    const ts = post("hello");
    expect(await reply(ts, /Tool said/)).toContain("wrote: hello");
    expect(notes()).toEqual(["hello"]);
    // Who cleared the call is shown: in the posted reply's line for it when the turn ended before
    // its first flush, or in its task card's details when a loaded host let the reply stream.
    const streamed = e2e.fake.state.botMessages(GENERAL, ts).flatMap((m) => [...m.tasks.values()]);
    if (streamed.length === 0) {
      expect(thread(e2e.fake, GENERAL, ts).join("\n")).toMatch(/✓ write_note .* · allowed by reviewer: /);
    } else {
      expect(streamed.map((task) => `${task.title} ${task.details ?? ""}`).join("\n")).toMatch(
        /write_note.*allowed by reviewer: /,
      );
    }
    expect(messageWithButton(e2e.fake, GENERAL, ts, "Approve")).toBeUndefined();
    expect(reviewerRequests(e2e.openai)).toHaveLength(1);
  });

  it("deny: reason to the person, terse to the model; Allow anyway refused for a stranger, runs once for the requester", async () => {
    e2e = await start(always("deny"), "reviewed");
    const ts = post("wipe");
    const card = await cardIn(ts, "Allow anyway");
    expect(blockTexts(card.blocks).join("\n")).toContain("REVIEWER-REASON (wipe)");
    await reply(ts, /Tool said/);
    const toModel = e2e.openai.requests
      .filter((b) => b.stream === true)
      .flatMap((b) => b.messages)
      .filter((m: { role: string }) => m.role === "tool");
    expect(toModel.map((m: { content: string }) => m.content)).toEqual([REVIEWER_DENIED_RESULT]);
    expect(notes()).toEqual([]);

    press(BEN, card, "Allow anyway");
    const refusal = await e2e.fake.waitFor(
      () => e2e.fake.state.ephemerals.find((e) => e.user === BEN),
      "a refusal",
    );
    expect(refusal.text).toContain("Only");
    expect(buttonId(card, "Allow anyway")).toBeDefined();

    press(ANA, card, "Allow anyway");
    await e2e.fake.waitFor(
      () => blockTexts(card.blocks).some((t) => t.includes("Allowed anyway by <@U1ANA>")),
      "the settled card",
    );
    expect(buttonId(card, "Allow anyway")).toBeUndefined();

    // The same call again (the agent proposes "wipe" for the message "wipe"): runs once, unreviewed.
    post("wipe", ts);
    await e2e.fake.waitFor(() => notes().length === 1, "the allowed call");
    await e2e.current.manager.idle();
    expect(reviewerRequests(e2e.openai)).toHaveLength(1);
    // And once more: the grant is used up, the reviewer denies again.
    post("wipe", ts);
    await e2e.fake.waitFor(() => reviewerRequests(e2e.openai).length === 2, "a second review");
    await e2e.current.manager.idle();
    expect(notes()).toEqual(["wipe"]);
  });

  it("unsure: the ordinary approval card", async () => {
    e2e = await start(always("unsure"), "reviewed");
    const ts = post("maybe");
    const card = await cardIn(ts, "Approve");
    press(ANA, card, "Approve");
    await reply(ts, /Tool said/);
    expect(notes()).toEqual(["maybe"]);
  });

  it("shadow: cards as usual, and /coworker reviewer reports agreement and the dangerous disagreement", async () => {
    e2e = await start(always("allow"), "interactive", true);
    const ts = post("first");
    press(ANA, await cardIn(ts, "Approve"), "Approve");
    await reply(ts, /Tool said: wrote: first/);
    post("second", ts);
    const second = await e2e.fake.waitFor(
      () =>
        e2e.fake.state
          .botMessages(GENERAL, ts)
          .filter((m) => buttonId(m, "Deny") !== undefined)
          .at(-1),
      "the second card",
    );
    press(ANA, second, "Deny");
    await e2e.current.manager.idle();
    await e2e.fake.waitFor(() => reviewerRequests(e2e.openai).length === 2, "two shadow verdicts");
    expect(notes()).toEqual(["first"]);
    await e2e.fake.slashCommand({ user: ANA, channel: GENERAL, text: "reviewer" }).acked;
    const answer = await e2e.fake.waitFor(() => e2e.fake.state.responses.at(-1), "the command reply");
    const text = String(answer.body.text);
    expect(text).toContain("2 cards seen");
    expect(text).toContain("reviewer 2 allow / 0 deny / 0 unsure (2 shadow)");
    expect(text).toContain("agreed with people on 1/2 (50%)");
    expect(text).toContain(
      "Dangerous disagreements in this session (reviewer allow, person denied), latest 1:",
    );
  });
});
