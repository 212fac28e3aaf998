/**
 * TelegramChannel.mayAct, the check a scheduled task's or a subscription's wake-up runs under: in
 * a group the person must still be in it (getChatMember: not left or kicked) — an allowed user
 * and a member of an allowed group alike — their private chat needs no lookup, and a lookup
 * Telegram cannot answer rejects, never counting as allowed.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ThreadTarget } from "../../../src/core/thread-target.js";
import { ALICE, GROUP, type Harness, MALLORY, OPEN_GROUP, startHarness } from "./harness.js";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const chat = (id: number, chatType: string): ThreadTarget => ({
  platform: "telegram",
  workspace: "tg",
  channel: String(id),
  extra: { chatType },
});

describe("TelegramChannel.mayAct: membership of the group", () => {
  it("refuses an allowed user who left or was removed from the group", async () => {
    harness = await startHarness();
    const { channel, tg } = harness;
    tg.state.chat(GROUP);
    tg.state.setMember(GROUP.id, ALICE.id, "member");
    expect(await channel.mayAct(String(ALICE.id), chat(GROUP.id, "supergroup"))).toBe(true);
    tg.state.setMember(GROUP.id, ALICE.id, "left");
    expect(await channel.mayAct(String(ALICE.id), chat(GROUP.id, "supergroup"))).toBe(false);
    tg.state.setMember(GROUP.id, ALICE.id, "kicked");
    expect(await channel.mayAct(String(ALICE.id), chat(GROUP.id, "supergroup"))).toBe(false);
  });

  it("refuses a member of an allowed group once they are out of it", async () => {
    harness = await startHarness();
    const { channel, tg } = harness;
    tg.state.chat(OPEN_GROUP);
    tg.state.setMember(OPEN_GROUP.id, MALLORY.id, "member");
    expect(await channel.mayAct(String(MALLORY.id), chat(OPEN_GROUP.id, "supergroup"))).toBe(true);
    tg.state.setMember(OPEN_GROUP.id, MALLORY.id, "left");
    expect(await channel.mayAct(String(MALLORY.id), chat(OPEN_GROUP.id, "supergroup"))).toBe(false);
  });

  it("lets the person's private chat through without a lookup, and rejects when Telegram cannot answer", async () => {
    harness = await startHarness();
    const { channel, tg } = harness;
    tg.state.chat(GROUP);
    tg.failNext("getChatMember", 403, "Forbidden: bot was kicked from the supergroup chat", 2);
    expect(await channel.mayAct(String(ALICE.id), chat(ALICE.id, "private"))).toBe(true);
    await expect(channel.mayAct(String(ALICE.id), chat(GROUP.id, "supergroup"))).rejects.toThrow(/403/);
  });
});
