import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  ALICE,
  ALICE_DM,
  BOB,
  FORUM,
  GROUP,
  type Harness,
  MALLORY,
  MALLORY_DM,
  OPEN_GROUP,
  startHarness,
} from "./harness.js";
import { eventually } from "../../support/eventually.js";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** Mallory asks in, and Alice (an allowed user) approves the code in the refusal. */
async function pairMalloryByAlice(tg: Harness["tg"]): Promise<void> {
  tg.sendUserMessage({ chat: MALLORY_DM, from: MALLORY, text: "let me in" });
  const refusal = await tg.waitFor(() => tg.state.botMessages(MALLORY.id)[0]);
  const code = /\/pair ([A-Z0-9]{6})/.exec(refusal.text)?.[1];
  tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: `/pair ${code}` });
  await tg.waitFor(() => tg.state.botMessages(ALICE.id)[0]);
}

describe("Telegram channel: inbound messages", () => {
  it("records a DM as an InboundMessage with dedupe keys, user, target and reply id", async () => {
    harness = await startHarness();
    const { tg, service } = harness;
    const { update, message } = tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "hello there" });
    await tg.waitFor(() => service.received.length === 1);
    const inbound = service.received[0]!;
    // Update ids count per bot: the key names the bot, so another bot on the same store is not deduplicated against it.
    expect(inbound.dedupeKeys).toEqual([`tg:${tg.botInfo.id}:update:${update.update_id}`]);
    expect(inbound.text).toBe("hello there");
    expect(inbound.user).toEqual({ id: String(ALICE.id), name: "@alice" });
    // The session layer reads a command addressed to another name as not ours.
    expect(inbound.botUsername).toBe("coworker_bot");
    expect(inbound.target).toEqual({
      platform: "telegram",
      workspace: "tg",
      channel: String(ALICE.id),
      extra: { chatType: "private", replyTo: message.message_id },
    });
    expect(harness.channel.health()).toEqual({ ready: true, state: "polling" });
    expect(harness.channel.description).toBe("telegram (polling)");
  });

  it("refuses a message whose id or chat id is no safe integer (a lane position could not hold it), and goes on", async () => {
    harness = await startHarness();
    const { tg, service } = harness;
    const unsafe = 2 ** 53 + 2;
    const date = Math.floor(Date.now() / 1000);
    tg.injectUpdate({ message: { message_id: unsafe, date, chat: ALICE_DM, from: ALICE, text: "lost id" } });
    tg.injectUpdate({
      message: { message_id: 7, date, chat: { ...ALICE_DM, id: -unsafe }, from: ALICE, text: "lost chat" },
    });
    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "hello there" });
    await tg.waitFor(() => service.received.length === 1);
    await eventually(
      () =>
        harness!
          .logs()
          .filter((line) => line.msg === "inbound payload refused" && line.kind === "malformed_message")
          .length === 2,
      "both unsafe updates refused",
    );
    expect(service.received.map((message) => message.text)).toEqual(["hello there"]);
    expect(harness.channel.health()).toEqual({ ready: true, state: "polling" });
  });

  it("refuses a user who is not allowed once, with their id and a pairing code an admin can approve", async () => {
    harness = await startHarness();
    const { tg, service } = harness;
    tg.sendUserMessage({ chat: MALLORY_DM, from: MALLORY, text: "let me in" });
    const refusal = await tg.waitFor(() => tg.state.botMessages(MALLORY.id)[0]);
    expect(refusal.text).toContain(`Your Telegram user id is ${MALLORY.id}`);
    const code = /\/pair ([A-Z0-9]{6})/.exec(refusal.text)?.[1];
    expect(code).toBeDefined();
    tg.sendUserMessage({ chat: MALLORY_DM, from: MALLORY, text: "please?" });
    await vi.waitFor(() => {
      expect(
        harness!.logs().filter((line) => line.msg === "telegram: refused" && line.told === false),
      ).toHaveLength(1);
    });
    expect(tg.state.botMessages(MALLORY.id)).toHaveLength(1);
    expect(service.received).toHaveLength(0);

    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: `/pair ${code}` });
    const approved = await tg.waitFor(() => tg.state.botMessages(ALICE.id)[0]);
    expect(approved.text).toContain(`user id ${MALLORY.id}`);
    tg.sendUserMessage({ chat: MALLORY_DM, from: MALLORY, text: "thanks" });
    await tg.waitFor(() => service.received.length === 1);
    expect(service.received[0]!.text).toBe("thanks");
  });

  it("approves a pairing code shown before a restart (codes are kept in the store, not in one process)", async () => {
    harness = await startHarness();
    harness.tg.sendUserMessage({ chat: MALLORY_DM, from: MALLORY, text: "let me in" });
    const refusal = await harness.tg.waitFor(() => harness!.tg.state.botMessages(MALLORY.id)[0]);
    const code = /\/pair ([A-Z0-9]{6})/.exec(refusal.text)?.[1];
    harness = await harness.restart();
    const { tg, service } = harness;
    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: `/pair ${code}` });
    const approved = await tg.waitFor(() => tg.state.botMessages(ALICE.id)[0]);
    expect(approved.text).toContain(`Approved: Mallory (user id ${MALLORY.id})`);
    tg.sendUserMessage({ chat: MALLORY_DM, from: MALLORY, text: "thanks" });
    await tg.waitFor(() => service.received.length === 1);
  });

  it("lets an allowed user list pairings with /pairs and end one with /unpair; a paired user may do neither", async () => {
    harness = await startHarness();
    const { tg, service } = harness;
    await pairMalloryByAlice(tg);
    // The paired account may use the bot, but not see or change pairings.
    tg.sendUserMessage({ chat: MALLORY_DM, from: MALLORY, text: "/pairs" });
    const refused = await tg.waitFor(() => tg.state.botMessages(MALLORY.id)[1]);
    expect(refused.text).toContain("Only an admin");
    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "/pairs" });
    const list = await tg.waitFor(() => tg.state.botMessages(ALICE.id)[1]);
    expect(list.text).toContain(`(user id ${MALLORY.id}): approved by`);
    expect(list.text).toContain(`(user id ${ALICE.id})`);
    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: `/unpair ${MALLORY.id}` });
    const ended = await tg.waitFor(() => tg.state.botMessages(ALICE.id)[2]);
    expect(ended.text).toContain(`Pairing ended`);
    expect(
      await harness.channel.mayAct(String(MALLORY.id), {
        platform: "telegram",
        workspace: "tg",
        channel: String(MALLORY.id),
        extra: { chatType: "private" },
      }),
    ).toBe(false);
    expect(service.commands).toHaveLength(0);
  });

  it("answers /pairs and /unpair only in a private chat: in a group it lists nothing and ends nothing", async () => {
    harness = await startHarness();
    const { tg, service } = harness;
    tg.state.chat(GROUP);
    await pairMalloryByAlice(tg);
    tg.sendUserMessage({ chat: GROUP, from: ALICE, text: "/pairs@coworker_bot" });
    const list = await tg.waitFor(() => tg.state.botMessages(GROUP.id)[0]);
    expect(list.text).toBe("Send /pairs to me in a private chat.");
    tg.sendUserMessage({ chat: GROUP, from: ALICE, text: `/unpair@coworker_bot ${MALLORY.id}` });
    const unpair = await tg.waitFor(() => tg.state.botMessages(GROUP.id)[1]);
    expect(unpair.text).toBe("Send /unpair to me in a private chat.");
    const dm = {
      platform: "telegram",
      workspace: "tg",
      channel: String(MALLORY.id),
      extra: { chatType: "private" },
    };
    expect(await harness.channel.mayAct(String(MALLORY.id), dm)).toBe(true);
    expect(service.commands).toHaveLength(0);
  });

  it("says who may still act in a chat (mayAct): allowed users anywhere, anyone in an allowed group, nobody else", async () => {
    harness = await startHarness();
    const { channel, tg } = harness;
    // In a group the person must also still be in it (getChatMember): the fake must know the chats.
    for (const group of [GROUP, OPEN_GROUP]) tg.state.chat(group);
    const chat = (id: number, chatType?: string) => ({
      platform: "telegram",
      workspace: "tg",
      channel: String(id),
      ...(chatType ? { extra: { chatType } } : {}),
    });
    expect(await channel.mayAct(String(ALICE.id), chat(ALICE.id, "private"))).toBe(true);
    expect(await channel.mayAct(String(ALICE.id), chat(GROUP.id, "supergroup"))).toBe(true);
    expect(await channel.mayAct(String(MALLORY.id), chat(MALLORY.id, "private"))).toBe(false);
    expect(await channel.mayAct(String(MALLORY.id), chat(GROUP.id, "supergroup"))).toBe(false);
    // An allowed group lets every member in, also for a target that does not record its type.
    expect(await channel.mayAct(String(MALLORY.id), chat(OPEN_GROUP.id))).toBe(true);
    expect(await channel.mayAct("not-a-number", chat(OPEN_GROUP.id))).toBe(false);
  });

  it("answers a stranger's flood of /start and /pair with one reply, not one per message", async () => {
    harness = await startHarness();
    const { tg } = harness;
    for (const text of ["/start", "/start", "/pair ABCDEF", "/pair", "/start"])
      tg.sendUserMessage({ chat: MALLORY_DM, from: MALLORY, text });
    await vi.waitFor(() => {
      expect(harness!.logs().filter((line) => line.msg === "telegram: refused")).toHaveLength(5);
    });
    const replies = tg.state.botMessages(MALLORY.id);
    expect(replies).toHaveLength(1);
    expect(replies[0]!.text).toMatch(
      /^I am Coworker[\s\S]*Your Telegram user id is \d+[\s\S]*\/pair [A-Z0-9]{6}/,
    );
  });

  it("in groups acts only on a mention, a reply to the bot or its command", async () => {
    harness = await startHarness();
    const { tg, service } = harness;
    tg.sendUserMessage({ chat: GROUP, from: ALICE, text: "just chatting" });
    tg.sendUserMessage({ chat: GROUP, from: ALICE, text: "hey @someone_else" });
    tg.sendUserMessage({ chat: GROUP, from: ALICE, text: "/status@other_bot" });
    tg.sendUserMessage({ chat: GROUP, from: ALICE, text: "@coworker_bot what is up?" });
    await tg.waitFor(() => service.received.length === 1);
    expect(service.received[0]!.text).toBe("what is up?");
    await service.output(service.received[0]!.target).postText("an answer");
    const [answer] = tg.state.botMessages(GROUP.id);
    expect(answer?.reply_to_message_id).toBe(Number(service.received[0]!.target.extra?.replyTo));
    tg.sendUserMessage({ chat: GROUP, from: BOB, text: "and a follow-up", replyTo: answer!.message_id });
    await tg.waitFor(() => service.received.length === 2);
    expect(service.received[1]!.user.id).toBe(String(BOB.id));
    tg.sendUserMessage({ chat: GROUP, from: ALICE, text: "/status@coworker_bot" });
    await tg.waitFor(() => service.commands.length === 1);
    expect(service.received).toHaveLength(2);
  });

  it("leaves another bot's command alone, in a DM and in a reply to the bot, but runs its own", async () => {
    harness = await startHarness();
    const { tg, service } = harness;
    // The session layer reads "/mode@other_bot auto" as "/mode auto": it must not get there.
    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "/mode@other_bot auto" });
    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "/new@Other_Bot" });
    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "/status@Coworker_Bot" });
    // Messages of one chat are handled in order: when /status is in, the two before it are done.
    await tg.waitFor(() => service.commands.length === 1);
    expect(service.received.map((message) => message.text)).toEqual([]);
    tg.sendUserMessage({ chat: GROUP, from: ALICE, text: "@coworker_bot hi" });
    const hi = await tg.waitFor(() => service.received.find((message) => message.text === "hi"));
    await service.output(hi.target).postText("an answer");
    const [answer] = tg.state.botMessages(GROUP.id);
    for (const text of ["/mode@other_bot auto", "/new@other_bot", "/status@coworker_bot"])
      tg.sendUserMessage({ chat: GROUP, from: ALICE, text, replyTo: answer!.message_id });
    await tg.waitFor(() => service.commands.length === 2);
    expect(service.commands.map((command) => [command.name, command.args])).toEqual([
      ["status", []],
      ["status", []],
    ]);
    expect(service.received.map((message) => message.text)).toEqual(["hi"]);
    // Nor after a mention of this bot, which is taken out before the text is read as a command.
    tg.sendUserMessage({ chat: GROUP, from: ALICE, text: "@coworker_bot /mode@other_bot auto" });
    tg.sendUserMessage({ chat: GROUP, from: ALICE, text: "@coworker_bot thanks" });
    await tg.waitFor(() => service.received.some((message) => message.text === "thanks"));
    expect(service.received.map((message) => message.text)).toEqual(["hi", "thanks"]);
    await tg.waitFor(() => tg.state.botMessages(ALICE.id).length === 1);
    expect(tg.state.botMessages(ALICE.id).map((message) => message.text)).toEqual(["ran status"]);
  });

  it("lets every member of an allowed chat in, but nobody else in other groups", async () => {
    harness = await startHarness();
    const { tg, service } = harness;
    tg.sendUserMessage({ chat: GROUP, from: MALLORY, text: "@coworker_bot hi" });
    const refusal = await tg.waitFor(() => tg.state.botMessages(GROUP.id)[0]);
    expect(refusal.text).toContain(`chat id ${GROUP.id}`);
    tg.sendUserMessage({ chat: OPEN_GROUP, from: MALLORY, text: "@coworker_bot hi" });
    await tg.waitFor(() => service.received.length === 1);
    expect(service.received[0]!.target.channel).toBe(String(OPEN_GROUP.id));
  });

  it("gives each forum topic its own target; a topic message is not a reply to the bot", async () => {
    harness = await startHarness();
    const { tg, service } = harness;
    tg.sendUserMessage({ chat: FORUM, from: ALICE, threadId: 11, text: "@coworker_bot in eleven" });
    tg.sendUserMessage({ chat: FORUM, from: ALICE, threadId: 12, text: "@coworker_bot in twelve" });
    tg.sendUserMessage({ chat: FORUM, from: ALICE, text: "@coworker_bot in general" });
    await tg.waitFor(() => service.received.length === 3);
    const threads = service.received.map((message) => message.target.thread);
    expect(new Set(threads)).toEqual(new Set(["11", "12", undefined]));
    // The topic "reply" quirk: a plain topic message without a mention is ignored.
    tg.sendUserMessage({ chat: FORUM, from: ALICE, threadId: 11, text: "no mention" });
    tg.sendUserMessage({ chat: FORUM, from: ALICE, threadId: 11, text: "@coworker_bot last" });
    await tg.waitFor(() => service.received.length === 4);
    expect(service.received[3]!.text).toBe("last");
  });

  it("keeps a supergroup that is no forum one session: a reply thread there is no topic", async () => {
    harness = await startHarness();
    const { tg, service } = harness;
    service.onReceive = (message, output) => output.postText(`re: ${message.text}`);
    const first = tg.sendUserMessage({ chat: GROUP, from: ALICE, text: "@coworker_bot first" });
    const answer = await tg.waitFor(() => tg.state.botMessages(GROUP.id)[0]);
    expect(answer.reply_to_message_id).toBe(first.message.message_id);
    // Replying to the bot's answer joins the reply thread Telegram opened under the first message.
    const reply = tg.sendUserMessage({
      chat: GROUP,
      from: ALICE,
      replyTo: answer.message_id,
      text: "second",
    });
    expect(reply.message).toMatchObject({ message_thread_id: first.message.message_id });
    expect(reply.message).not.toHaveProperty("is_topic_message");
    await tg.waitFor(() => service.received.length === 2);
    expect(service.received.map((message) => message.target.thread)).toEqual([undefined, undefined]);
    expect(service.received.map((message) => message.target.channel)).toEqual([
      String(GROUP.id),
      String(GROUP.id),
    ]);
    // The answer goes to the chat, replying to the message, without naming a thread.
    const second = await tg.waitFor(() => tg.state.botMessages(GROUP.id)[1]);
    expect(second.text).toBe("re: second");
    expect(tg.callsOf("sendMessage").filter((call) => call.error)).toEqual([]);
    expect(tg.callsOf("sendMessage").map((call) => call.params.message_thread_id)).toEqual([
      undefined,
      undefined,
    ]);
  });

  it("runs nothing for an anonymous admin and tells the chat why once, only when addressed", async () => {
    harness = await startHarness();
    const { tg, service } = harness;
    // The anonymous admin's messages are from a bot too (GroupAnonymousBot): only ours count.
    const ours = (chatId: number) =>
      tg.state.botMessages(chatId).filter((message) => message.from.id === tg.bot.id);
    tg.sendAnonymousAdminMessage({ chat: OPEN_GROUP, text: "talking among ourselves" });
    tg.sendAnonymousAdminMessage({ chat: OPEN_GROUP, text: "@coworker_bot hi" });
    const note = await tg.waitFor(() => ours(OPEN_GROUP.id)[0]);
    expect(note.text).toContain("Remain anonymous");
    tg.sendAnonymousAdminMessage({ chat: OPEN_GROUP, text: "/status" });
    tg.sendAnonymousAdminMessage({ chat: OPEN_GROUP, replyTo: note.message_id, text: "why not?" });
    await vi.waitFor(() => {
      expect(
        harness!
          .logs()
          .filter((line) => line.msg === "telegram: anonymous admin refused" && line.told === false),
      ).toHaveLength(2);
    });
    // Another chat is told on its own.
    tg.sendAnonymousAdminMessage({ chat: GROUP, text: "/new@coworker_bot" });
    await tg.waitFor(() => ours(GROUP.id)[0]);
    // A person in the same allowed chat still gets an answer.
    tg.sendUserMessage({ chat: OPEN_GROUP, from: BOB, text: "/status" });
    await tg.waitFor(() => service.commands.length === 1);
    expect(service.commands[0]!.user.id).toBe(String(BOB.id));
    await tg.waitFor(() => ours(OPEN_GROUP.id).length === 2);
    expect(service.received).toEqual([]);
    expect(ours(OPEN_GROUP.id).map((message) => message.text)).toEqual([note.text, "ran status"]);
  });

  it("routes commands to the service and answers /start itself", async () => {
    harness = await startHarness();
    const { tg, service } = harness;
    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "/mode auto" });
    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "/new" });
    await tg.waitFor(() => service.commands.length === 2);
    expect(service.commands.map((command) => [command.name, command.args])).toEqual([
      ["mode", ["auto"]],
      ["new", []],
    ]);
    await tg.waitFor(() => tg.state.botMessages(ALICE.id).length === 2);
    expect(tg.state.botMessages(ALICE.id).map((message) => message.text)).toEqual([
      "ran mode auto",
      "ran new",
    ]);
    tg.sendUserMessage({ chat: MALLORY_DM, from: MALLORY, text: "/start" });
    const start = await tg.waitFor(() => tg.state.botMessages(MALLORY.id)[0]);
    expect(start.text).toContain(`Your Telegram user id is ${MALLORY.id}`);
    expect(start.text).toContain("TELEGRAM_ALLOWED_USERS");
    expect(tg.state.commands.map((command) => (command as { command: string }).command)).toEqual([
      "start",
      "new",
      "stop",
      "mode",
      "model",
      "status",
      "grants",
      "reviewer",
      "skills",
      "skill",
      "schedules",
      "subscriptions",
    ]);
  });

  it("saves documents and photos under uploads/<session>/ and refuses oversized ones with a note", async () => {
    harness = await startHarness({ fileMaxBytes: 64 });
    const { tg, service, workspace } = harness;
    tg.sendUserMessage({
      chat: ALICE_DM,
      from: ALICE,
      caption: "read this",
      document: { content: Buffer.from("col1,col2\n1,2\n"), name: "../data.csv" },
    });
    await tg.waitFor(() => service.received.length === 1);
    const [file] = service.received[0]!.files;
    expect(file?.path).toMatch(/^uploads\/telegram_tg_1001\/-\/\d+-data\.csv$/);
    expect(await readFile(join(workspace, file!.path), "utf8")).toBe("col1,col2\n1,2\n");
    // The file's text travels beside the person's words, never in them.
    expect(service.received[0]!.text).toBe("read this");
    expect(service.received[0]!.attachments).toEqual([
      expect.objectContaining({ kind: "file-text", name: "data.csv", text: "```csv\ncol1,col2\n1,2\n```" }),
    ]);

    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, photo: { content: Buffer.alloc(32, 1) } });
    await tg.waitFor(() => service.received.length === 2);
    expect(service.received[1]!.files[0]?.name).toMatch(/^photo-u\d+\.jpg$/);

    tg.sendUserMessage({
      chat: ALICE_DM,
      from: ALICE,
      document: { content: Buffer.alloc(100), name: "big.bin" },
    });
    const note = await tg.waitFor(() =>
      tg.state.botMessages(ALICE.id).find((m) => m.text.includes("big.bin")),
    );
    expect(note.text).toContain("limit");
    expect(service.received).toHaveLength(2);
  });

  it("passes the same dedupe keys when an update is delivered again after a restart", async () => {
    harness = await startHarness();
    const { tg, service } = harness;
    const { update } = tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "once" });
    await tg.waitFor(() => service.received.length === 1);
    harness = await harness.restart(service);
    tg.redeliver(update);
    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "twice" });
    await tg.waitFor(() => service.received.length === 2);
    await vi.waitFor(() => {
      const duplicates = harness!
        .logs()
        .filter((line) => (line.result as { status?: string })?.status === "duplicate");
      expect(duplicates).toHaveLength(1);
    });
    expect(service.received.map((message) => message.text)).toEqual(["once", "twice"]);
  });

  it("reports a 409 conflict clearly and keeps polling after a backoff", async () => {
    harness = await startHarness();
    const { tg, service } = harness;
    tg.conflictNext(2);
    await tg.waitFor(
      () => tg.callsOf("getUpdates").filter((call) => call.error?.startsWith("Conflict")).length === 2,
    );
    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "still there?" });
    await tg.waitFor(() => service.received.length === 1);
    const conflicts = harness.logs().filter((line) => String(line.msg).includes("409 conflict"));
    expect(conflicts.length).toBeGreaterThanOrEqual(1);
    expect(conflicts[0]?.msg).toContain("another process is polling this bot token");
    expect(harness.channel.health().ready).toBe(true);
  });
});
