/**
 * wake_me_later's per-conversation limit counted in the store: two ScheduleServices on one store (two
 * processes) together let a thread set at most its wake-ups per hour (its sessions together: "new"
 * starts no count afresh), a refused or failed call
 * uses no slot, and the slots free after the hour (manual clock; Date, the memory store's
 * expiry, moves with it). A restart on the same store keeps the count.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import os from "node:os";
import { wakeLaterBudgetKey } from "../../src/schedules/wake-later.js";
import { createStore } from "../../src/store/create-store.js";
import { HOUR_MS, slotKey, storeSlotBudget } from "../../src/store/slot-budget.js";
import type { Store } from "../../src/store/store.js";
import { ANA_HOME, ANA_OTHER, type Harness, ManualClock, openHarness, T0 } from "./support.js";

let store: Store;
let clock: ManualClock;
const harnesses: Harness[] = [];

beforeEach(async () => {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(T0);
  clock = new ManualClock(T0);
  store = await createStore({ url: "memory:", dataDir: os.tmpdir() });
});
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.service.shutdown();
  await store.close();
  vi.useRealTimers();
});

/** One process's service on the shared store, counting wake-ups in its 'budgets' space. */
async function openProcess(limit: number): Promise<Harness> {
  const h = await openHarness({
    store,
    clock,
    settings: { wakesPerSessionPerHour: limit, maxWakeMs: 3_600_000 },
    extra: { wakeBudget: storeSlotBudget(store.space("budgets"), { now: () => clock.now() }) },
  });
  harnesses.push(h);
  return h;
}

function tick(ms: number): void {
  vi.setSystemTime(clock.now() + ms);
  clock.advance(ms);
}

const oks = async (calls: Promise<{ ok: boolean }>[]) =>
  (await Promise.all(calls)).filter((o) => o.ok).length;

describe("wake_me_later limit shared by the processes on a store", () => {
  it("two services allow one session its limit between them, and again after the hour", async () => {
    const [a, b] = [await openProcess(3), await openProcess(3)];
    const wake = (h: Harness, note: string) => h.service.wakeLater(ANA_HOME, { in_s: 60, note });
    expect(await oks([wake(a, "1"), wake(b, "2"), wake(a, "3"), wake(b, "4"), wake(a, "5")])).toBe(3);
    const refused = await wake(b, "6");
    expect(refused).toEqual({
      ok: false,
      message: "This conversation set 3 wake-ups in the last hour, the most allowed; try again later.",
    });
    // Another conversation has its own count.
    expect((await b.service.wakeLater(ANA_OTHER, { in_s: 60, note: "x" })).ok).toBe(true);

    tick(HOUR_MS - 1_000);
    expect((await wake(a, "7")).ok).toBe(false);
    tick(2_000);
    expect(await oks([wake(a, "8"), wake(b, "9"), wake(a, "10"), wake(b, "11")])).toBe(3);
  });

  it("a call refused for another reason uses no slot, and a restart keeps the count", async () => {
    const a = await openProcess(2);
    expect((await a.service.wakeLater(ANA_HOME, { in_s: 7_200, note: "too far" })).ok).toBe(false);
    expect(await store.space("budgets").get(slotKey(wakeLaterBudgetKey(ANA_HOME.target), 0))).toBe(undefined);
    expect((await a.service.wakeLater(ANA_HOME, { in_s: 60, note: "a" })).ok).toBe(true);
    const restarted = await a.restart();
    expect((await restarted.wakeLater(ANA_HOME, { in_s: 60, note: "b" })).ok).toBe(true);
    expect((await restarted.wakeLater(ANA_HOME, { in_s: 60, note: "c" })).ok).toBe(false);
  });

  it("a thread's switch to a new session ('new') does not start its count afresh", async () => {
    const a = await openProcess(2);
    expect(await oks([0, 1].map((n) => a.service.wakeLater(ANA_HOME, { in_s: 60, note: `${n}` })))).toBe(2);
    // The same thread, after "new": another session id, the same conversation.
    const renewed = { ...ANA_HOME, sessionId: "s-home-2" };
    expect(await a.service.wakeLater(renewed, { in_s: 60, note: "again" })).toEqual({
      ok: false,
      message: "This conversation set 2 wake-ups in the last hour, the most allowed; try again later.",
    });
  });

  it("keeps nothing for a thread once its wake-ups are over an hour old: the slots expire in the store", async () => {
    const a = await openProcess(2);
    const slot = slotKey(wakeLaterBudgetKey(ANA_HOME.target), 0);
    expect((await a.service.wakeLater(ANA_HOME, { in_s: 60, note: "a" })).ok).toBe(true);
    expect(await store.space("budgets").get(slot)).toBe(T0);
    tick(HOUR_MS + 1);
    expect(await store.space("budgets").get(slot)).toBe(undefined);
  });
});
