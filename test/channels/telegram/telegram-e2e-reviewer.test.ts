/**
 * End to end in reviewed mode on Telegram: the real grammY bot on the fake Bot API, the real
 * session layer, the agent and the reviewer both on the fake OpenAI server. Allow runs without a
 * card; deny shows the reviewer's reason with "Allow anyway" (another member's press is refused
 * with an alert, the requester's lets the exact call run once) while the model gets a short
 * refusal; unsure shows the ordinary card; shadow mode statistics come back from /reviewer.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { PermissionMode } from "../../../src/core/modes.js";
import { REVIEWER_DENIED_RESULT } from "../../../src/engine/reviewer/reviewed-ask.js";
import type { FakeHandler } from "../../fakes/fake-openai.js";
import type { StoredMessage } from "../../fakes/fake-telegram/fake-telegram.js";
import {
  reviewedScript,
  reviewedStack,
  reviewerRequests,
  type ScriptVerdict,
} from "../../support/reviewer-e2e.js";
import { ALICE, BOB, GROUP } from "./harness.js";
import { type Stack, startStack } from "./stack.js";

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

function start(handler: FakeHandler, mode: PermissionMode, shadow = false): Promise<Stack> {
  return startStack({
    allowedUsers: [ALICE.id, BOB.id],
    handler,
    extend: ({ provider, openai, runs }) => reviewedStack({ openai, provider, runs, mode, shadow }),
  });
}

const always = (verdict: ScriptVerdict) => reviewedScript(() => verdict);
const notes = (s: Stack) => s.runs.runs.filter((r) => r.tool === "write_note").map((r) => r.args.text);
const say = (s: Stack, text: string, from = ALICE) =>
  s.tg.sendUserMessage({ chat: GROUP, from, text: `@coworker_bot ${text}` });

function cardWith(s: Stack, label: string): StoredMessage | undefined {
  return s.tg.state
    .botMessages(GROUP.id)
    .filter((m) => m.reply_markup?.inline_keyboard.flat().some((b) => b.text === label))
    .at(-1);
}

function press(s: Stack, card: StoredMessage, label: string, from = ALICE) {
  return s.tg.pressButton({
    chat: GROUP,
    from,
    messageId: card.message_id,
    data: s.tg.buttonData(card, label),
  });
}

const botSaid = (s: Stack, pattern: RegExp) =>
  s.tg.waitFor(() => s.tg.state.botMessages(GROUP.id).find((m) => pattern.test(m.text)));

describe("Telegram end to end: reviewed mode", () => {
  it("allow: no card, the call runs", async () => {
    stack = await start(always("allow"), "reviewed");
    say(stack, "milk");
    await botSaid(stack, /Tool said: wrote: milk/);
    // The answer's tool summary keeps saying what cleared the call.
    await botSaid(stack, /🔧 \S+ ✓ \(allowed by reviewer: /);
    expect(notes(stack)).toEqual(["milk"]);
    expect(cardWith(stack, "Approve")).toBeUndefined();
    expect(reviewerRequests(stack.openai)).toHaveLength(1);
  });

  it("deny: the reason to the person, terse to the model; Allow anyway refused for Bob, once for Alice", async () => {
    stack = await start(always("deny"), "reviewed");
    const s = stack;
    say(s, "wipe");
    const card = await s.tg.waitFor(() => cardWith(s, "Allow anyway"));
    expect(card.text).toContain("REVIEWER-REASON (wipe)");
    await botSaid(s, /Tool said/);
    const toModel = s.openai.requests
      .filter((b) => b.stream === true)
      .flatMap((b) => b.messages)
      .filter((m: { role: string }) => m.role === "tool")
      .map((m: { content: string }) => m.content);
    expect(toModel).toEqual([REVIEWER_DENIED_RESULT]);

    const bobs = press(s, card, "Allow anyway", BOB);
    await s.tg.waitFor(() => s.tg.state.queries.get(bobs.callback_query.id)?.answer);
    expect(s.tg.state.queries.get(bobs.callback_query.id)!.answer!.show_alert).toBe(true);

    const alices = press(s, card, "Allow anyway");
    await s.tg.waitFor(() => s.tg.state.queries.get(alices.callback_query.id)?.answer);
    expect(s.tg.state.queries.get(alices.callback_query.id)!.answer!.show_alert).toBe(false);
    await s.tg.waitFor(
      () => s.tg.state.message(GROUP.id, card.message_id)?.reply_markup === undefined || undefined,
    );
    expect(s.tg.state.message(GROUP.id, card.message_id)!.text).toContain("Allowed anyway by");

    say(s, "wipe");
    await s.tg.waitFor(() => notes(s).length === 1 || undefined);
    await s.manager.idle();
    expect(reviewerRequests(s.openai)).toHaveLength(1);
    say(s, "wipe");
    await s.tg.waitFor(() => reviewerRequests(s.openai).length === 2 || undefined);
    await s.manager.idle();
    expect(notes(s)).toEqual(["wipe"]);
  });

  it("unsure: the ordinary approval card", async () => {
    stack = await start(always("unsure"), "reviewed");
    const s = stack;
    say(s, "maybe");
    const card = await s.tg.waitFor(() => cardWith(s, "Approve"));
    press(s, card, "Approve");
    await botSaid(s, /Tool said/);
    expect(notes(s)).toEqual(["maybe"]);
  });

  it("shadow: cards as usual, and /reviewer reports agreement and the dangerous disagreement", async () => {
    stack = await start(always("allow"), "interactive", true);
    const s = stack;
    say(s, "first");
    press(s, await s.tg.waitFor(() => cardWith(s, "Approve")), "Approve");
    await botSaid(s, /Tool said: wrote: first/);
    say(s, "second");
    const second = await s.tg.waitFor(() => {
      const card = cardWith(s, "Deny");
      return card?.text.includes("second") ? card : undefined;
    });
    press(s, second, "Deny");
    await s.manager.idle();
    await s.tg.waitFor(() => reviewerRequests(s.openai).length === 2 || undefined);
    expect(notes(s)).toEqual(["first"]);
    s.tg.sendUserMessage({ chat: GROUP, from: ALICE, text: "/reviewer" });
    const reply = await botSaid(s, /Safety reviewer statistics/);
    expect(reply.text).toContain("agreed with people on 1/2 (50%)");
    expect(reply.text).toContain(
      "Dangerous disagreements in this session (reviewer allow, person denied), latest 1:",
    );
    s.tg.sendUserMessage({ chat: GROUP, from: ALICE, text: "/status" });
    const status = await botSaid(s, /^Session /);
    expect(status.text).toContain("Reviewer: 2 calls (2 allow, 0 deny, 0 unsure)");
  });
});
