import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Api } from "grammy";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { TelegramDirectory } from "../../../src/channels/telegram/telegram-directory.js";
import { TelegramMessenger } from "../../../src/channels/telegram/telegram-messenger.js";
import type { Caller, ThreadTarget } from "../../../src/core/thread-target.js";
import type { FakeChat, FakeUser } from "../../fakes/fake-telegram/fake-telegram.js";
import { ALICE, ALICE_DM, BOB, FORUM, GROUP, type Harness, MALLORY, startHarness } from "./harness.js";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const topic: ThreadTarget = {
  platform: "telegram",
  workspace: "tg",
  channel: String(FORUM.id),
  thread: "44",
  extra: { chatType: "supergroup", replyTo: 1 },
};

/** A message sent for `user` from `target` (the session's thread). */
function sender(target: ThreadTarget, user: FakeUser = ALICE): Caller {
  return { sessionId: "s1", target, requester: { id: String(user.id), name: user.first_name } };
}

/** What the messenger answers for a chat it will not post to for `name`, whatever the reason. */
function refusal(chat: string, name: string): string {
  return `Nothing was sent to ${chat}: besides this conversation, I post only to channels that ${name} is a member of and I am in, and I could not confirm that ${chat} is one. Check its name or id, or ask ${name} to join it first.`;
}

describe("TelegramMessenger", () => {
  it("posts to the session's own chat inside its topic, or to another chat by id", async () => {
    harness = await startHarness();
    const { tg, channel } = harness;
    tg.state.chat(FORUM);
    tg.state.chat(GROUP);
    const messenger = channel.messenger;
    expect(await messenger.sendMessage(sender(topic), String(FORUM.id), "**hi** topic")).toEqual({
      ok: true,
      where: `Telegram chat ${FORUM.id} (topic 44)`,
    });
    expect(await messenger.sendMessage(sender(topic), String(GROUP.id), "hi group")).toEqual({
      ok: true,
      where: `Telegram chat ${GROUP.id}`,
    });
    expect(tg.state.botMessages(FORUM.id, 44).map((m) => m.text)).toEqual(["hi topic"]);
    expect(tg.state.botMessages(GROUP.id).map((m) => [m.text, m.message_thread_id])).toEqual([
      ["hi group", undefined],
    ]);
    expect(tg.callsOf("sendMessage").every((call) => call.params.reply_parameters === undefined)).toBe(true);
  });

  it("posts into a topic named as chat:topic", async () => {
    harness = await startHarness();
    harness.tg.state.chat(FORUM);
    expect(await harness.channel.messenger.sendMessage(sender(topic), `${FORUM.id}:7`, "hi")).toEqual({
      ok: true,
      where: `Telegram chat ${FORUM.id} (topic 7)`,
    });
    expect(harness.tg.state.botMessages(FORUM.id, 7).map((m) => m.text)).toEqual(["hi"]);
  });

  it("reports bad chat names and unknown chats as results, sending nothing", async () => {
    harness = await startHarness();
    const messenger = harness.channel.messenger;
    expect(await messenger.sendMessage(sender(topic), "#general", "x")).toEqual({
      ok: false,
      error: refusal("#general", "Alice"),
    });
    expect(await messenger.sendMessage(sender(topic), "-100999", "x")).toEqual({
      ok: false,
      error: refusal("-100999", "Alice"),
    });
    expect(harness.tg.callsOf("sendMessage")).toEqual([]);
  });

  it("posts to another group only when the requester is a member of it (getChatMember)", async () => {
    harness = await startHarness();
    const { tg, channel } = harness;
    tg.state.chat(FORUM);
    tg.state.chat(GROUP);
    tg.state.setMember(GROUP.id, BOB.id, "member");
    tg.state.setMember(GROUP.id, ALICE.id, "left");
    tg.state.setMember(GROUP.id, MALLORY.id, "kicked");
    const group = String(GROUP.id);
    // Left, kicked, never there, or Telegram could not say: the same refusal as a chat that does not exist.
    expect(await channel.messenger.sendMessage(sender(topic), group, "x")).toEqual({
      ok: false,
      error: refusal(group, "Alice"),
    });
    expect(await channel.messenger.sendMessage(sender(topic, MALLORY), group, "x")).toEqual({
      ok: false,
      error: refusal(group, "Mallory"),
    });
    tg.failNext("getChatMember", 400, "Bad Request: CHAT_ADMIN_REQUIRED");
    expect(await channel.messenger.sendMessage(sender(topic, BOB), group, "x")).toEqual({
      ok: false,
      error: refusal(group, "Bob"),
    });
    expect(tg.callsOf("sendMessage")).toEqual([]);
    expect(await channel.messenger.sendMessage(sender(topic, BOB), group, "from Bob")).toMatchObject({
      ok: true,
    });
    expect(tg.state.botMessages(GROUP.id).map((m) => m.text)).toEqual(["from Bob"]);
    expect(tg.callsOf("getChatMember").map((call) => call.params.user_id)).toEqual([
      ALICE.id,
      MALLORY.id,
      BOB.id,
      BOB.id,
    ]);
  });

  it("refuses another person's private chat with the bot, and still answers in its own", async () => {
    harness = await startHarness();
    const { tg, channel } = harness;
    tg.state.chat(ALICE_DM);
    const elsewhere = await channel.messenger.sendMessage(
      sender(topic, BOB),
      String(ALICE_DM.id),
      "click this link",
    );
    expect(!elsewhere.ok && elsewhere.error).toContain("private chat with one person");
    expect(tg.callsOf("sendMessage")).toEqual([]);
    const dm: ThreadTarget = { platform: "telegram", workspace: "tg", channel: String(ALICE_DM.id) };
    expect(await channel.messenger.sendMessage(sender(dm), String(ALICE_DM.id), "hi Alice")).toMatchObject({
      ok: true,
    });
  });

  it("names where a message would go for the approval card, and nothing where it would be refused", async () => {
    harness = await startHarness();
    const { tg, channel, logs } = harness;
    tg.state.chat(GROUP);
    tg.state.chat(ALICE_DM);
    tg.state.setMember(GROUP.id, BOB.id, "member");
    tg.state.setMember(GROUP.id, ALICE.id, "left");
    const group = String(GROUP.id);
    expect(await channel.messenger.destinationOf(sender(topic, BOB), group)).toBe(
      `${GROUP.title} (Telegram chat ${GROUP.id})`,
    );
    expect(await channel.messenger.destinationOf(sender(topic), group)).toBeUndefined();
    expect(await channel.messenger.destinationOf(sender(topic, BOB), String(ALICE_DM.id))).toBeUndefined();
    expect(await channel.messenger.destinationOf(sender(topic, BOB), "-100999")).toBeUndefined();
    expect(tg.callsOf("sendMessage")).toEqual([]);
    // Building a card sends nothing, so nothing was refused: only a refused send is logged.
    const refused = () => logs().filter((line) => line.msg === "telegram send_message refused");
    expect(refused()).toEqual([]);
    expect(await channel.messenger.sendMessage(sender(topic), group, "x")).toMatchObject({ ok: false });
    expect(await channel.messenger.sendMessage(sender(topic, BOB), String(ALICE_DM.id), "x")).toMatchObject({
      ok: false,
    });
    expect(refused().map((line) => [line.channel, typeof line.reason])).toEqual([
      [group, "string"],
      [String(ALICE_DM.id), "string"],
    ]);
  });

  it("uploads a file with sendDocument into the same chat and topic", async () => {
    harness = await startHarness();
    const { tg, channel, workspace } = harness;
    tg.state.chat(FORUM);
    tg.state.chat(ALICE_DM);
    const path = join(workspace, "report.txt");
    await writeFile(path, "the report");
    const result = await channel.messenger.sendFile(topic, { path, name: "report.txt" }, "Here it is");
    expect(result).toEqual({ ok: true, where: `Telegram chat ${FORUM.id} (topic 44)` });
    const [upload] = tg.callsOf("sendDocument");
    expect(upload!.params.message_thread_id).toBe(44);
    expect(upload!.params.caption).toBe("Here it is");
    expect(upload!.params.document).toMatchObject({ filename: "report.txt", bytes: 10 });
    expect(upload!.params.document.content.toString()).toBe("the report");
  });

  it("cuts a caption past Telegram's 1,024 characters with an ellipsis, never inside an emoji", async () => {
    harness = await startHarness();
    const { tg, channel, workspace } = harness;
    tg.state.chat(FORUM);
    const path = join(workspace, "report.txt");
    await writeFile(path, "the report");
    // The cut at 1,023 falls between the emoji's two halves: the whole emoji is left off.
    const caption = `${"c".repeat(1022)}😀 and the rest`;
    const result = await channel.messenger.sendFile(topic, { path, name: "report.txt" }, caption);
    expect(result.ok).toBe(true);
    expect(tg.callsOf("sendDocument")[0]!.params.caption).toBe(`${"c".repeat(1022)}…`);
    // The model is told what did not go out: the emoji (two UTF-16 units) and " and the rest".
    expect(result).toMatchObject({
      where: expect.stringMatching(/caption was cut .*its last 15 were not sent/),
    });
  });
});

/**
 * A messenger on a stand-in Bot API answering getChat with `chat` and getChatMember with
 * `member` (the fake server knows statuses only, not a member's rights), recording what it sends.
 */
function postingTo(chat: FakeChat, member: Record<string, unknown>) {
  const sent: string[] = [];
  const lookups = { getChat: 0 };
  const api = {
    getChat: async () => {
      lookups.getChat++;
      return chat;
    },
    getChatMember: async () => ({ user: { id: ALICE.id, is_bot: false, first_name: "Alice" }, ...member }),
    sendMessage: async (_chatId: number, text: string) => {
      sent.push(text);
      return { message_id: sent.length, date: 0, chat };
    },
  } as unknown as Api;
  const directory = new TelegramDirectory(api, { botInfo: { id: 777, username: "coworker_bot" } });
  const messenger = new TelegramMessenger(api, pino({ level: "silent" }), () => directory);
  return { send: () => messenger.sendMessage(sender(topic), String(chat.id), "notice"), sent, lookups };
}

describe("TelegramMessenger posting rights", () => {
  const channel: FakeChat = { id: -100500, type: "channel", title: "Announcements" };

  it("refuses a muted member of a group and a subscriber of a broadcast channel, sending nothing", async () => {
    const muted = postingTo(GROUP, { status: "restricted", is_member: true, can_send_messages: false });
    expect(await muted.send()).toEqual({ ok: false, error: refusal(String(GROUP.id), "Alice") });
    expect(muted.sent).toEqual([]);
    const subscriber = postingTo(channel, { status: "member" });
    expect(await subscriber.send()).toEqual({ ok: false, error: refusal(String(channel.id), "Alice") });
    expect(subscriber.sent).toEqual([]);
  });

  it("posts for a restricted member who may still write, and for a channel admin who may post", async () => {
    const restricted = postingTo(GROUP, { status: "restricted", is_member: true, can_send_messages: true });
    expect(await restricted.send()).toEqual({ ok: true, where: `Telegram chat ${GROUP.id}` });
    expect(restricted.sent).toEqual(["notice"]);
    const admin = postingTo(channel, { status: "administrator", can_post_messages: true });
    expect(await admin.send()).toEqual({ ok: true, where: `Telegram chat ${channel.id}` });
    expect(admin.sent).toEqual(["notice"]);
  });

  it("looks the chat up once per post: the posting test reads the chat's kind from the lookup", async () => {
    const admin = postingTo(
      { id: -100500, type: "channel", title: "Announcements" },
      {
        status: "administrator",
        can_post_messages: true,
      },
    );
    expect(await admin.send()).toMatchObject({ ok: true });
    expect(admin.lookups.getChat).toBe(1);
  });
});
