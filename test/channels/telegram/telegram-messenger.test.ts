import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ThreadTarget } from "../../../src/core/thread-target.js";
import { ALICE_DM, FORUM, GROUP, type Harness, startHarness } from "./harness.js";

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

describe("TelegramMessenger", () => {
  it("posts to the session's own chat inside its topic, or to another chat by id", async () => {
    harness = await startHarness();
    const { tg, channel } = harness;
    tg.state.chat(FORUM);
    tg.state.chat(GROUP);
    const messenger = channel.messenger;
    expect(await messenger.sendMessage(topic, String(FORUM.id), "**hi** topic")).toEqual({
      ok: true,
      where: `Telegram chat ${FORUM.id} (topic 44)`,
    });
    expect(await messenger.sendMessage(topic, String(GROUP.id), "hi group")).toEqual({
      ok: true,
      where: `Telegram chat ${GROUP.id}`,
    });
    expect(tg.state.botMessages(FORUM.id, 44).map((m) => m.text)).toEqual(["hi topic"]);
    expect(tg.state.botMessages(GROUP.id).map((m) => [m.text, m.message_thread_id])).toEqual([
      ["hi group", undefined],
    ]);
    expect(tg.callsOf("sendMessage").every((call) => call.params.reply_parameters === undefined)).toBe(true);
  });

  it("reports bad chat names and Telegram refusals as results", async () => {
    harness = await startHarness();
    const messenger = harness.channel.messenger;
    const named = await messenger.sendMessage(topic, "#general", "x");
    expect(named).toMatchObject({ ok: false });
    expect(!named.ok && named.error).toContain("not a Telegram chat id");
    const unknown = await messenger.sendMessage(topic, "-100999", "x");
    expect(!unknown.ok && unknown.error).toContain("chat not found");
  });

  it("refuses another person's private chat with the bot, and still answers in its own", async () => {
    harness = await startHarness();
    const { tg, channel } = harness;
    tg.state.chat(ALICE_DM);
    const elsewhere = await channel.messenger.sendMessage(topic, String(ALICE_DM.id), "click this link");
    expect(!elsewhere.ok && elsewhere.error).toContain("private chat with one person");
    expect(tg.callsOf("sendMessage")).toEqual([]);
    const dm: ThreadTarget = { platform: "telegram", workspace: "tg", channel: String(ALICE_DM.id) };
    expect(await channel.messenger.sendMessage(dm, String(ALICE_DM.id), "hi Alice")).toMatchObject({
      ok: true,
    });
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
});
