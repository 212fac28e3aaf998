/**
 * Slot budgets (store/slot-budget.ts): a key's N per window are N slots claimed with
 * setIfAbsent, so two connections to one SQLite file or one redis-server (as two processes would
 * have) together take at most N in the window, and N again after it; a refusal says when the
 * oldest claim frees; a released slot is free at once.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { HOUR_MS, slotKey, storeSlotBudget } from "../../src/store/slot-budget.js";
import { type RedisServer, startRedisServer } from "../support/redis-server.js";
import { tempStores } from "../support/temp-stores.js";

const open = tempStores("slot-budget-");

describe("storeSlotBudget", () => {
  it("claims one slot per use, says when the oldest frees, and a released slot is free again", async () => {
    const store = await open("memory:");
    let now = 1_000;
    const budget = storeSlotBudget(store.space("budgets"), { now: () => now });
    const first = await budget.take("wake:sub1", 2);
    expect(first.ok).toBe(true);
    expect(await store.space("budgets").get(slotKey("wake:sub1", 0))).toBe(1_000);
    now = 2_000;
    expect((await budget.take("wake:sub1", 2)).ok).toBe(true);
    expect(await budget.take("wake:sub1", 2)).toEqual({ ok: false, freesAt: 1_000 + HOUR_MS });
    // Another key has its own slots.
    expect((await budget.take("wake:sub2", 2)).ok).toBe(true);
    if (first.ok) await first.release();
    expect((await budget.take("wake:sub1", 2)).ok).toBe(true);
    expect((await budget.take("wake:sub1", 2)).ok).toBe(false);
  });
});

describe.each([
  { name: "two connections to one SQLite file", url: () => undefined },
  { name: "two connections to one redis-server", url: () => redis!.url },
])("storeSlotBudget on $name", ({ url }) => {
  // A window no pause outlasts, so no slot frees during a burst; the window's end is reached by
  // moving this process's clock, by which the stores judge a claimed slot expired.
  const windowMs = 60_000;

  it("takes at most the limit between them in the window, and again after it", async () => {
    const [one, two] = [await open(url()), await open(url())];
    const budgets = [one!, two!].map((store) => storeSlotBudget(store.space("budgets"), { windowMs }));
    const burst = async () => {
      const takes = await Promise.all(
        Array.from({ length: 10 }, (_, i) => budgets[i % 2]!.take("wake-later:s1", 3)),
      );
      return takes.filter((take) => take.ok).length;
    };
    expect(await burst()).toBe(3);
    const start = Date.now();
    vi.useFakeTimers({ toFake: ["Date"], now: start + windowMs - 10_000 });
    try {
      expect(await burst()).toBe(0);
      vi.setSystemTime(start + windowMs + 10_000);
      expect(await burst()).toBe(3);
    } finally {
      vi.useRealTimers();
    }
  });
});

let redis: RedisServer | undefined;
beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(async () => {
  await redis?.stop();
});
