/**
 * End-to-end approvals and questions: cards in the thread, presses by the requester, an approver
 * and someone else, double presses, typed answers, and a press after a restart that resumes the
 * turn in a new SessionManager and SlackChannel on the same store.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { FakeHandler } from "../../fakes/fake-openai.js";
import type { FakeMessage } from "../../fakes/fake-slack/index.js";
import {
  ANA,
  BEN,
  BOSS,
  buttonId,
  type E2E,
  GENERAL,
  MENTION,
  messageWithButton,
  shown,
  startE2E,
  thread,
} from "./e2e-harness.js";
import { actionIds, blockTexts } from "./support.js";

let e2e: E2E;
afterEach(async () => e2e?.close());

/** The model calls one tool, then reports the tool's result. */
function callThenReport(name: string, args: object, id = "call_1"): FakeHandler {
  return ({ body }) => {
    const last = body.messages.at(-1);
    if (last?.role === "tool") return { text: `Tool said: ${last.content}` };
    return { toolCalls: [{ id, name, arguments: JSON.stringify(args) }] };
  };
}

async function cardIn(ts: string, label: string): Promise<FakeMessage> {
  return e2e.fake.waitFor(() => messageWithButton(e2e.fake, GENERAL, ts, label), `a card with "${label}"`);
}

function press(user: string, card: FakeMessage, label: string): void {
  const actionId = buttonId(card, label);
  if (!actionId) throw new Error(`no "${label}" button`);
  e2e.fake.pressButton({ user, channel: GENERAL, messageTs: card.ts, actionId });
}

async function finalReply(ts: string, pattern: RegExp): Promise<string> {
  return e2e.fake.waitFor(
    () => thread(e2e.fake, GENERAL, ts).find((text) => pattern.test(text)),
    `a reply matching ${pattern}`,
  );
}

function askNote(): string {
  return e2e.fake.userPosts({ user: ANA, channel: GENERAL, text: `${MENTION} write a note saying hi` }).ts;
}

describe("Slack end to end: approvals", () => {
  it("approve: the card shows who approved, the tool runs once and the turn finishes", async () => {
    e2e = await startE2E(callThenReport("write_note", { text: "hi" }));
    const ts = askNote();
    const card = await cardIn(ts, "Approve");
    expect(blockTexts(card.blocks).some((t) => t.includes("write_note"))).toBe(true);
    expect(actionIds(card.blocks)).toHaveLength(new Set(actionIds(card.blocks)).size);
    press(ANA, card, "Approve");
    expect(await finalReply(ts, /Tool said/)).toContain("wrote: hi");
    await e2e.fake.waitFor(
      () => blockTexts(card.blocks).includes("*Approved by <@U1ANA>*"),
      "the decided card",
    );
    expect(actionIds(card.blocks)).toEqual([]);
    expect(e2e.runs.count("call_1")).toBe(1);
  });

  it("deny: the card says so and the tool never runs", async () => {
    e2e = await startE2E(callThenReport("write_note", { text: "hi" }));
    const ts = askNote();
    const card = await cardIn(ts, "Deny");
    press(ANA, card, "Deny");
    await finalReply(ts, /Tool said/);
    await e2e.fake.waitFor(() => blockTexts(card.blocks).includes("*Denied by <@U1ANA>*"), "the denied card");
    expect(e2e.runs.count("call_1")).toBe(0);
  });

  it("a press by someone else is refused privately and changes nothing; an approver may decide", async () => {
    e2e = await startE2E(callThenReport("write_note", { text: "hi" }));
    const ts = askNote();
    const card = await cardIn(ts, "Approve");
    press(BEN, card, "Approve");
    const refusal = await e2e.fake.waitFor(
      () => e2e.fake.state.ephemerals.find((e) => e.user === BEN),
      "a refusal",
    );
    expect(refusal.channel).toBe(GENERAL);
    expect(actionIds(card.blocks).length).toBeGreaterThan(0);
    expect(e2e.runs.count("call_1")).toBe(0);
    press(BOSS, card, "Approve");
    await finalReply(ts, /Tool said/);
    await e2e.fake.waitFor(
      () => blockTexts(card.blocks).includes("*Approved by <@U9BOSS>*"),
      "the card approved by Boss",
    );
    expect(e2e.runs.count("call_1")).toBe(1);
  });

  it("a double press decides once and tells the second press it was already decided", async () => {
    e2e = await startE2E(callThenReport("write_note", { text: "hi" }));
    const ts = askNote();
    const card = await cardIn(ts, "Approve");
    press(ANA, card, "Approve");
    press(ANA, card, "Approve");
    await finalReply(ts, /Tool said/);
    const notice = await e2e.fake.waitFor(
      () => e2e.fake.state.ephemerals.find((e) => e.user === ANA),
      "a notice",
    );
    expect(notice.text.toLowerCase()).toContain("already");
    expect(e2e.runs.count("call_1")).toBe(1);
  });

  it("after a restart, pressing Approve resumes the turn in the same thread", async () => {
    e2e = await startE2E(callThenReport("write_note", { text: "after restart" }));
    const ts = askNote();
    const card = await cardIn(ts, "Approve");
    await e2e.restart();
    press(ANA, card, "Approve");
    expect(await finalReply(ts, /Tool said/)).toContain("wrote: after restart");
    await e2e.fake.waitFor(
      () => blockTexts(card.blocks).includes("*Approved by <@U1ANA>*"),
      "the decided card",
    );
    expect(e2e.runs.count("call_1")).toBe(1);
    expect(e2e.openai.requests).toHaveLength(2);
  });
});

describe("Slack end to end: questions", () => {
  const ask = callThenReport("ask_user", { question: "Which colour?", options: ["red", "blue"] });

  it("answers by button: the card shows the answer and the model receives it", async () => {
    e2e = await startE2E(ask);
    const ts = askNote();
    const card = await cardIn(ts, "blue");
    expect(blockTexts(card.blocks)).toContain("Or reply to this message with your answer.");
    press(ANA, card, "blue");
    expect(await finalReply(ts, /Tool said/)).toContain("blue");
    await e2e.fake.waitFor(
      () => blockTexts(card.blocks).some((t) => t.includes("Answered by <@U1ANA>: blue")),
      "the answered card",
    );
    expect(actionIds(card.blocks)).toEqual([]);
  });

  it("answers by a typed reply in the thread", async () => {
    e2e = await startE2E(ask);
    const ts = askNote();
    const card = await cardIn(ts, "red");
    e2e.fake.userPosts({ user: ANA, channel: GENERAL, text: "green, please", threadTs: ts });
    expect(await finalReply(ts, /Tool said/)).toContain("green, please");
    await e2e.fake.waitFor(() => actionIds(card.blocks).length === 0, "the settled card");
    expect(shown(card)).toContain("green, please");
  });
});
