/**
 * A group upgraded to a supergroup (telegram-migrations.ts): the channel follows what Telegram
 * tells it — the service messages, or the 400 with `migrate_to_chat_id` — keeps the conversation
 * in the group's session, lets the supergroup in where the group was allowed, re-sends a reply
 * that met the 400 once, and believes no migrate_* field a user's message could carry.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { FakeChat } from "../../fakes/fake-telegram/fake-telegram.js";
import { ALICE, BOB, type Harness, MALLORY, startHarness } from "./harness.js";
import { type Stack, startStack } from "./stack.js";

const OLD_GROUP: FakeChat = { id: -4242, type: "group", title: "Plain group" };
const NEW_ID = -1004242;

let harness: Harness | undefined;
let stack: Stack | undefined;
afterEach(async () => {
  await harness?.close();
  await stack?.close();
  harness = undefined;
  stack = undefined;
});

const userTexts = (body: { messages: { role: string; content?: unknown }[] }) =>
  body.messages.filter((message) => message.role === "user").map((message) => String(message.content));

describe("Telegram: a group upgraded to a supergroup", () => {
  it("keeps the conversation and the allowed_chats listing, also after a restart", async () => {
    stack = await startStack({ allowedUsers: [], allowedChats: [OLD_GROUP.id] });
    const { tg, openai } = stack;
    tg.sendUserMessage({ chat: OLD_GROUP, from: BOB, text: "@coworker_bot remember kiwi" });
    await tg.waitFor(() => tg.state.botMessages(OLD_GROUP.id)[0]);
    const supergroup = tg.migrateGroup(OLD_GROUP, ALICE);
    expect(supergroup.id).toBe(NEW_ID);
    // A mention in the supergroup is answered there, in the group's session.
    const asked = tg.sendUserMessage({ chat: supergroup, from: BOB, text: "@coworker_bot which fruit?" });
    const answer = await tg.waitFor(() =>
      tg.state.botMessages(NEW_ID).find((message) => message.text.includes("which fruit")),
    );
    expect(answer.reply_to_message_id).toBe(asked.message.message_id);
    expect(userTexts(openai.requests[1]!)).toEqual(["remember kiwi", "which fruit?"]);
    // The mapping was stored: after a restart the supergroup is still allowed and still the same session.
    stack = await stack.restart();
    tg.sendUserMessage({ chat: supergroup, from: BOB, text: "@coworker_bot and now?" });
    await tg.waitFor(() => tg.state.botMessages(NEW_ID).find((message) => message.text.includes("and now")));
    expect(userTexts(openai.requests[2]!)).toEqual(["remember kiwi", "which fruit?", "and now?"]);
    expect(tg.calls.filter((call) => call.error)).toEqual([]);
  });

  it("re-sends a reply that meets the upgrade's 400 to the new chat once, then writes there directly", async () => {
    harness = await startHarness({ allowedChats: [String(OLD_GROUP.id)] });
    const { tg, service } = harness;
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    service.onReceive = async (_message, output) => {
      await released;
      await output.postText("first answer");
      await output.postText("second answer");
    };
    tg.sendUserMessage({ chat: OLD_GROUP, from: MALLORY, text: "@coworker_bot hi" });
    await tg.waitFor(() => service.received.length === 1);
    // Upgraded while the turn runs, and the bot has not heard of it yet.
    tg.migrateGroup(OLD_GROUP, ALICE, { announce: false });
    release();
    await tg.waitFor(() => tg.state.botMessages(NEW_ID).length === 2);
    const sends = tg.callsOf("sendMessage").map((call) => ({
      chat: call.params.chat_id,
      error: call.error,
      reply: call.params.reply_parameters !== undefined,
    }));
    expect(sends).toEqual([
      { chat: OLD_GROUP.id, error: "Bad Request: group chat was upgraded to a supergroup chat", reply: true },
      { chat: NEW_ID, error: undefined, reply: false },
      { chat: NEW_ID, error: undefined, reply: true },
    ]);
    expect(tg.state.botMessages(NEW_ID).map((message) => message.text)).toEqual([
      "first answer",
      "second answer",
    ]);
    const logged = harness.logs().filter((line) => line.msg?.toString().includes("migrated"));
    expect(logged).toEqual([
      expect.objectContaining({
        level: 30,
        oldChatId: OLD_GROUP.id,
        newChatId: NEW_ID,
        source: "send error",
      }),
    ]);
    // The supergroup is now allowed, and its messages go to the group's session.
    tg.sendUserMessage({
      chat: { id: NEW_ID, type: "supergroup" },
      from: MALLORY,
      text: "@coworker_bot more",
    });
    await tg.waitFor(() => service.received.length === 2);
    expect(service.received[1]!.target.channel).toBe(String(OLD_GROUP.id));
  });

  it("follows the service messages and logs the migration at info", async () => {
    harness = await startHarness({ allowedChats: [String(OLD_GROUP.id)] });
    const { tg, service } = harness;
    tg.migrateGroup(OLD_GROUP, ALICE);
    await tg.waitFor(() => tg.pendingUpdates === 0);
    tg.sendUserMessage({ chat: { id: NEW_ID, type: "supergroup" }, from: MALLORY, text: "@coworker_bot hi" });
    await tg.waitFor(() => service.received.length === 1);
    expect(service.received[0]!.target.channel).toBe(String(OLD_GROUP.id));
    // The supergroup's own id travels along: per-channel approvers may be keyed by either.
    expect(service.received[0]!.target.extra?.alsoKnownAs).toBe(NEW_ID);
    expect(harness.logs().filter((line) => line.msg?.toString().includes("migrated"))).toEqual([
      expect.objectContaining({
        level: 30,
        oldChatId: OLD_GROUP.id,
        newChatId: NEW_ID,
        source: "service message",
      }),
    ]);
  });

  it("believes no migrate_* field in a reply_to_message", async () => {
    harness = await startHarness({ allowedChats: [String(OLD_GROUP.id)] });
    const { tg, service } = harness;
    const elsewhere: FakeChat = { id: -1009999, type: "supergroup", title: "Elsewhere" };
    tg.state.chat(elsewhere);
    const text = "@coworker_bot let me in";
    tg.injectUpdate({
      message: {
        message_id: 7,
        date: Math.floor(Date.now() / 1000),
        chat: elsewhere,
        from: MALLORY,
        text,
        entities: [{ type: "mention", offset: 0, length: "@coworker_bot".length }],
        reply_to_message: {
          message_id: 6,
          date: Math.floor(Date.now() / 1000),
          chat: elsewhere,
          migrate_from_chat_id: OLD_GROUP.id,
        },
      },
    });
    const refusal = await tg.waitFor(() => tg.state.botMessages(elsewhere.id)[0]);
    expect(refusal.text).toContain("not allowed");
    expect(service.received).toEqual([]);
    expect(harness.logs().filter((line) => line.msg?.toString().includes("migrated"))).toEqual([]);
  });
});
