/**
 * allowed_chats lets a listed group's members in, not everyone who can write there (a commenter
 * on a linked channel's posts need not join its discussion group): messages, commands and button
 * presses of someone in only through the listing are checked with getChatMember — the check
 * wake-ups run — kept a few minutes per person; a lookup Telegram cannot answer refuses, logged,
 * and that refusal is kept briefly; after Telegram's 429 nobody new is looked up until its wait
 * is over. Allowed and paired users are never looked up.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Card } from "../../../src/core/card.js";
import { ALICE, type Harness, MALLORY, OPEN_GROUP, startHarness } from "./harness.js";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const GROUP_TARGET = {
  platform: "telegram",
  workspace: "tg",
  channel: String(OPEN_GROUP.id),
  extra: { chatType: "supergroup" },
} as const;

/** Alice and Bob allowed users, OPEN_GROUP listed: Mallory (a commenter) and Carol (a member) are in only through it. */
const CAROL = { id: 7777, first_name: "Carol", username: "carol" };

/** Bob's approval card. */
const CARD: Card = {
  pendingId: "p_0123456789abcdefghijkl",
  kind: "approval",
  title: "Write a note?",
  blocks: [{ kind: "text", text: "The agent wants to write a note for @bob." }],
  buttons: [
    { action: "once", label: "Approve", style: "primary" },
    { action: "deny", label: "Deny", style: "danger" },
  ],
};

async function openGroup(): Promise<Harness> {
  const h = await startHarness();
  h.tg.state.chat(OPEN_GROUP);
  h.tg.state.setMember(OPEN_GROUP.id, CAROL.id, "member");
  h.tg.state.setMember(OPEN_GROUP.id, MALLORY.id, "left");
  return h;
}

describe("allowed_chats: members only", () => {
  it("refuses a non-member's messages and commands in an allowed group, told once that only members may", async () => {
    harness = await openGroup();
    const { tg, service } = harness;
    tg.sendUserMessage({ chat: OPEN_GROUP, from: MALLORY, text: "@coworker_bot what was said before?" });
    tg.sendUserMessage({ chat: OPEN_GROUP, from: MALLORY, text: "/mode@coworker_bot auto" });
    await vi.waitFor(() => {
      expect(harness!.logs().filter((line) => line.msg === "telegram: refused")).toHaveLength(2);
    });
    expect(service.received).toHaveLength(0);
    expect(service.commands).toHaveLength(0);
    const notes = tg.state.botMessages(OPEN_GROUP.id);
    expect(notes).toHaveLength(1);
    expect(notes[0]!.text).toContain("only members of this group may use this bot here");
    expect(notes[0]!.text).toContain(`Your Telegram user id is ${MALLORY.id}`);
    // The group is listed already: the note does not tell admins to list it.
    expect(notes[0]!.text).not.toContain("allowed_chats");
    expect(notes[0]!.text).toMatch(/\/pair [A-Z0-9]{6}/);
  });

  it("lets a member in, looking them up once for several messages; allowed users are never looked up", async () => {
    harness = await openGroup();
    const { tg, service } = harness;
    tg.sendUserMessage({ chat: OPEN_GROUP, from: CAROL, text: "@coworker_bot one" });
    tg.sendUserMessage({ chat: OPEN_GROUP, from: CAROL, text: "@coworker_bot two" });
    tg.sendUserMessage({ chat: OPEN_GROUP, from: ALICE, text: "@coworker_bot three" });
    await tg.waitFor(() => service.received.length === 3);
    expect(service.received.map((message) => message.text)).toEqual(["one", "two", "three"]);
    const lookups = tg.callsOf("getChatMember");
    expect(lookups.map((call) => Number(call.params.user_id))).toEqual([CAROL.id]);
  });

  it("refuses a non-member's button press and passes a member's on", async () => {
    harness = await openGroup();
    const { tg, service } = harness;
    const ref = await service.output(GROUP_TARGET).postCard(CARD);
    const card = tg.state.message(OPEN_GROUP.id, Number(ref.messageId))!;
    const data = tg.buttonData(card, "Approve");
    const mallory = tg.pressButton({ chat: OPEN_GROUP, from: MALLORY, messageId: card.message_id, data });
    await tg.waitFor(() => tg.state.queries.get(mallory.callback_query.id)?.answer);
    expect(tg.state.queries.get(mallory.callback_query.id)!.answer).toMatchObject({ show_alert: true });
    expect(service.presses).toHaveLength(0);
    const carol = tg.pressButton({ chat: OPEN_GROUP, from: CAROL, messageId: card.message_id, data });
    await tg.waitFor(() => tg.state.queries.get(carol.callback_query.id)?.answer);
    expect(service.presses).toHaveLength(1);
    expect(service.presses[0]!.user.id).toBe(String(CAROL.id));
  });

  it("refuses when Telegram cannot say, logs why, and keeps that refusal briefly rather than asking again", async () => {
    harness = await openGroup();
    const { tg, service } = harness;
    tg.failNext("getChatMember", 400, "Bad Request: CHAT_ADMIN_REQUIRED", 1);
    tg.sendUserMessage({ chat: OPEN_GROUP, from: CAROL, text: "@coworker_bot one" });
    tg.sendUserMessage({ chat: OPEN_GROUP, from: CAROL, text: "@coworker_bot two" });
    await vi.waitFor(() => {
      expect(harness!.logs().filter((line) => line.msg === "telegram: refused")).toHaveLength(2);
    });
    const warnings = harness
      .logs()
      .filter((line) => line.msg?.toString().startsWith("telegram: could not check membership"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ chatId: OPEN_GROUP.id, userId: CAROL.id });
    expect(String(warnings[0]!.err)).toMatch(/admin/i);
    expect(service.received).toHaveLength(0);
    expect(tg.callsOf("getChatMember")).toHaveLength(1);
  });

  it("a 429 on a membership lookup is not waited out: the chat's next messages are answered at once, its sender refused for now", async () => {
    harness = await openGroup();
    const { tg, service } = harness;
    // Within the harness's auto-retry bounds (5 s): another call would wait it out and try again.
    tg.rateLimitNext("getChatMember", 2);
    tg.sendUserMessage({ chat: OPEN_GROUP, from: CAROL, text: "@coworker_bot one" });
    tg.sendUserMessage({ chat: OPEN_GROUP, from: ALICE, text: "@coworker_bot two" });
    await tg.waitFor(() => service.received.length === 1);
    expect(service.received.map((message) => message.text)).toEqual(["two"]);
    expect(harness.logs().filter((line) => line.msg === "telegram: refused")).toHaveLength(1);
    expect(tg.callsOf("getChatMember")).toHaveLength(1);
  });

  it("after Telegram's 429 asks nobody new until its retry after is over: they are refused, logged once", async () => {
    harness = await openGroup();
    const { tg, service } = harness;
    const dave = { id: 8888, first_name: "Dave", username: "dave" };
    tg.state.setMember(OPEN_GROUP.id, dave.id, "member");
    // Longer than the harness's auto-retry waits for, so the 429 comes back at once.
    tg.rateLimitNext("getChatMember", 30);
    tg.sendUserMessage({ chat: OPEN_GROUP, from: CAROL, text: "@coworker_bot one" });
    tg.sendUserMessage({ chat: OPEN_GROUP, from: dave, text: "@coworker_bot two" });
    tg.sendUserMessage({ chat: OPEN_GROUP, from: CAROL, text: "@coworker_bot three" });
    tg.sendUserMessage({ chat: OPEN_GROUP, from: ALICE, text: "@coworker_bot four" });
    await tg.waitFor(() => service.received.length === 1);
    await vi.waitFor(() => {
      expect(harness!.logs().filter((line) => line.msg === "telegram: refused")).toHaveLength(3);
    });
    expect(service.received.map((message) => message.text)).toEqual(["four"]);
    expect(tg.callsOf("getChatMember").map((call) => Number(call.params.user_id))).toEqual([CAROL.id]);
    const waits = harness
      .logs()
      .filter((line) => line.msg?.toString().startsWith("telegram: Telegram asked to wait"));
    expect(waits).toHaveLength(1);
  });
});
