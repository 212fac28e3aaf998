/**
 * GroupMembership keeps a failed getChatMember briefly as "refused for now" instead of asking
 * Telegram again for every message, and while Telegram has asked to wait (429, retry after) it
 * looks nobody new up until the wait is over — refusing them as unconfirmed, logged once per wait.
 * Concurrent lookups of one person share one call. The clock is vitest's (Date only).
 */
import { GrammyError } from "grammy";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { GroupMembership } from "../../../src/channels/telegram/telegram-membership.js";

const GROUP = -1001;

/** A GroupMembership over `lookup`, with the log lines it writes. */
function membership(lookup: (chatId: number, userId: number) => Promise<boolean>) {
  const lines: { msg: string }[] = [];
  const logger = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { members: new GroupMembership({ lookup, logger }), lines };
}

const tooMany = (retryAfter: number) =>
  new GrammyError(
    "Call to 'getChatMember' failed!",
    {
      ok: false,
      error_code: 429,
      description: `Too Many Requests: retry after ${retryAfter}`,
      parameters: { retry_after: retryAfter },
    },
    "getChatMember",
    {},
  );

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(new Date("2026-01-01T00:00:00Z"));
});
afterEach(() => {
  vi.useRealTimers();
});

describe("GroupMembership", () => {
  it("keeps a failed lookup as refused for 30 s: 50 messages cost one call, the next after that asks again", async () => {
    const asked: number[] = [];
    let fail = true;
    const { members } = membership(async (_chat, user) => {
      asked.push(user);
      if (fail) throw new Error("Telegram lets only admins check this group's members");
      return true;
    });
    for (let i = 0; i < 50; i++) expect(await members.isMember(GROUP, 42)).toBe(false);
    expect(asked).toEqual([42]);
    fail = false;
    vi.advanceTimersByTime(29_000);
    expect(await members.isMember(GROUP, 42)).toBe(false);
    vi.advanceTimersByTime(1_001);
    expect(await members.isMember(GROUP, 42)).toBe(true);
    expect(asked).toEqual([42, 42]);
  });

  it("after Telegram's 429 looks nobody up until its retry after has passed, refusing them, logged once", async () => {
    const asked: number[] = [];
    let flood = true;
    const { members, lines } = membership(async (_chat, user) => {
      asked.push(user);
      if (flood) throw tooMany(120);
      return true;
    });
    expect(await members.isMember(GROUP, 42)).toBe(false);
    flood = false;
    for (let i = 0; i < 20; i++) expect(await members.isMember(GROUP, 100 + i)).toBe(false);
    expect(asked).toEqual([42]);
    expect(lines.filter((line) => line.msg.startsWith("telegram: Telegram asked to wait"))).toHaveLength(1);
    vi.advanceTimersByTime(119_000);
    expect(await members.isMember(GROUP, 42)).toBe(false);
    expect(await members.isMember(GROUP, 100)).toBe(false);
    expect(asked).toEqual([42]);
    vi.advanceTimersByTime(1_001);
    expect(await members.isMember(GROUP, 42)).toBe(true);
    expect(await members.isMember(GROUP, 100)).toBe(true);
    expect(asked).toEqual([42, 42, 100]);
  });

  it("reads the wait from Telegram's error kept as the cause (as the directory rethrows it)", async () => {
    const asked: number[] = [];
    const { members } = membership(async (_chat, user) => {
      asked.push(user);
      throw new Error('Telegram answered 429 "Too Many Requests: retry after 90"', { cause: tooMany(90) });
    });
    expect(await members.isMember(GROUP, 42)).toBe(false);
    vi.advanceTimersByTime(60_000);
    expect(await members.isMember(GROUP, 43)).toBe(false);
    expect(asked).toEqual([42]);
  });

  it("shares one lookup between concurrent checks of one person", async () => {
    let answer: (member: boolean) => void = () => undefined;
    let calls = 0;
    const { members } = membership(() => {
      calls += 1;
      return new Promise<boolean>((resolve) => {
        answer = resolve;
      });
    });
    const checks = [members.isMember(GROUP, 42), members.isMember(GROUP, 42), members.isMember(GROUP, 42)];
    answer(true);
    expect(await Promise.all(checks)).toEqual([true, true, true]);
    expect(calls).toBe(1);
  });
});
