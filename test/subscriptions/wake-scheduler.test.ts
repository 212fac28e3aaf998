/**
 * WakeScheduler with a claim (several processes): two schedulers batch the same matched messages
 * (one saw them live, the other rebuilt them from the shared buffer); each message wakes its
 * subscription once, a batch whose messages were all claimed elsewhere is dropped; a session busy
 * in another process (the answer is a promise) holds its batch. With a store budget, two
 * schedulers on one store together wake a subscription at most its hourly limit, and the held
 * batches go once the hour frees. A failing hand-over puts back only the messages it claimed; a
 * slow one renews its claims, while a dead process's claims lapse. All on a manual clock.
 */
import os from "node:os";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createStore } from "../../src/store/create-store.js";
import { HOUR_MS, type SlotBudget, storeSlotBudget } from "../../src/store/slot-budget.js";
import type { Store } from "../../src/store/store.js";
import type { BufferEntry } from "../../src/subscriptions/buffer-entry.js";
import { StoreWakeClaims, WAKE_CLAIM_TAKE_MS, type WakeClaims } from "../../src/subscriptions/wake-claims.js";
import {
  type ReadyBatch,
  subscriptionWakeBudgetKey,
  type WakeItem,
  type WakeSchedulerOptions,
} from "../../src/subscriptions/wake-contract.js";
import { WakeScheduler } from "../../src/subscriptions/wake-scheduler.js";
import { ManualClock } from "../schedules/support.js";

function item(seq: number): WakeItem {
  const at = new Date().toISOString();
  return {
    entry: { id: `m${seq}`, seq } as BufferEntry,
    position: { epoch: "e1", seq, at },
  };
}

afterEach(() => {
  vi.useRealTimers();
});

/** How every scheduler here batches: a message waits 30 ms for more, a batch 1 s at most. */
const TIMING = { debounceMs: 30, maxBatch: 50, maxWaitMs: 1_000 };

/**
 * A manual clock at 10:00 that drives the schedulers, with Date (the memory store's expiry)
 * faked to move with it; a memory store; and `tick`, which moves both and then lets the
 * schedulers' promises run for `flushRounds` turns of the event loop. Real timers come back
 * after each test.
 */
async function fakeClockStore(
  flushRounds: number,
): Promise<{ clock: ManualClock; store: Store; tick: (ms: number) => Promise<void> }> {
  const T0 = Date.parse("2026-12-05T10:00:00Z");
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(T0);
  const clock = new ManualClock(T0);
  const store = await createStore({ url: "memory:", dataDir: os.tmpdir() });
  const tick = async (ms: number) => {
    vi.setSystemTime(clock.now() + ms);
    clock.advance(ms);
    for (let i = 0; i < flushRounds; i += 1) await new Promise((resolve) => setImmediate(resolve));
  };
  return { clock, store, tick };
}

/**
 * A scheduler on the manual clock, in a process that claims its messages' wake-ups in `store` and
 * counts its wake-ups there (as each process of a deployment does); its sessions are never busy.
 */
function claimingScheduler(
  clock: ManualClock,
  store: Store,
  options: Pick<WakeSchedulerOptions, "maxWakesPerHour" | "deliver" | "onError">,
): WakeScheduler {
  return new WakeScheduler({
    ...TIMING,
    ...options,
    clock,
    isBusy: () => false,
    claims: new StoreWakeClaims(store.space("dedupe"), options.onError),
    budget: storeSlotBudget(store.space("budgets")),
  });
}

/**
 * A scheduler on the manual clock counting its wake-ups in `store` (its limit is never reached),
 * with `claims` when given; it records what it delivers.
 */
function scheduler(
  clock: ManualClock,
  store: Store,
  delivered: ReadyBatch[],
  claims?: WakeClaims,
  isBusy: (sessionId: string) => boolean | Promise<boolean> = () => false,
  onError: (error: unknown) => void = (error) => {
    throw error;
  },
): WakeScheduler {
  return new WakeScheduler({
    ...TIMING,
    maxWakesPerHour: 100,
    busyRetryMs: 60,
    clock,
    isBusy,
    deliver: async (batch) => {
      delivered.push(batch);
    },
    onError,
    budget: storeSlotBudget(store.space("budgets")),
    ...(claims ? { claims } : {}),
  });
}

/** Wake claims in `store`'s "dedupe" space, where finding one that cannot be read fails the test. */
function claimsIn(store: Store): StoreWakeClaims {
  return new StoreWakeClaims(store.space("dedupe"), (error) => {
    throw error;
  });
}

describe("WakeScheduler claims", () => {
  it("wakes once per matched message across two schedulers sharing a claim table", async () => {
    const { clock, store, tick } = await fakeClockStore(10);
    const seenByA: ReadyBatch[] = [];
    const seenByB: ReadyBatch[] = [];
    const a = scheduler(clock, store, seenByA, claimsIn(store));
    const b = scheduler(clock, store, seenByB, claimsIn(store));
    for (const seq of [1, 2, 3]) a.add("sub1", "s1", item(seq));
    await tick(TIMING.debounceMs);
    await a.settled();
    expect(seenByA.map((batch) => batch.items.map((i) => i.position.seq))).toEqual([[1, 2, 3]]);
    // B rebuilt 2 and 3 from the buffer and saw 4 live.
    for (const seq of [2, 3, 4]) b.add("sub1", "s1", item(seq));
    await tick(TIMING.debounceMs);
    await b.settled();
    expect(seenByB.map((batch) => batch.items.map((i) => i.position.seq))).toEqual([[4]]);

    for (const seq of [1, 2]) b.add("sub1", "s1", item(seq));
    await tick(TIMING.maxWaitMs);
    await b.settled();
    expect(seenByB).toHaveLength(1);
    expect(b.pendingCount("sub1")).toBe(0);
    await a.close();
    await b.close();
    await store.close();
  });

  it("without a claim, delivers every batch itself", async () => {
    const { clock, store, tick } = await fakeClockStore(10);
    const delivered: ReadyBatch[] = [];
    const only = scheduler(clock, store, delivered);
    for (const seq of [1, 2]) only.add("sub1", "s1", item(seq));
    await tick(TIMING.debounceMs - 1);
    expect(delivered).toEqual([]);
    await tick(1);
    await only.settled();
    expect(delivered.map((batch) => batch.items.length)).toEqual([2]);
    await only.close();
    await store.close();
  });
});

describe("WakeScheduler and a session busy in another process", () => {
  it("holds a batch while the store says the session is busy, and delivers once it is not", async () => {
    const { clock, store, tick } = await fakeClockStore(10);
    const delivered: ReadyBatch[] = [];
    let busy = true;
    const asked: string[] = [];
    const waiting = scheduler(clock, store, delivered, undefined, async (sessionId) => {
      asked.push(sessionId);
      return busy;
    });
    waiting.add("sub1", "s1", item(1));
    await tick(TIMING.debounceMs);
    expect(asked).toEqual(["s1"]);
    // Held: re-checked every 60 ms (busyRetryMs) while the session stays busy.
    await tick(60);
    await tick(60);
    expect(asked).toEqual(["s1", "s1", "s1"]);
    expect(delivered).toEqual([]);
    busy = false;
    await tick(60);
    await waiting.settled();
    expect(delivered.map((batch) => batch.items.length)).toEqual([1]);
    await waiting.close();
    await store.close();
  });

  it("delivers (the wake turn queues behind any turn) when asking the store fails, and reports it", async () => {
    const { clock, store, tick } = await fakeClockStore(10);
    const delivered: ReadyBatch[] = [];
    const errors: unknown[] = [];
    const failing = scheduler(
      clock,
      store,
      delivered,
      undefined,
      async () => {
        throw new Error("redis is down");
      },
      (error) => errors.push(error),
    );
    failing.add("sub1", "s1", item(1));
    await tick(TIMING.debounceMs);
    await failing.settled();
    expect(delivered).toHaveLength(1);
    expect(errors.map(String)).toEqual([expect.stringContaining("redis is down")]);
    await failing.close();
    await store.close();
  });
});

describe("WakeScheduler wake-ups counted in a shared store", () => {
  it("two schedulers on one store wake a subscription at most its limit an hour, and again after the hour", async () => {
    const { clock, store, tick } = await fakeClockStore(5);
    const budget = (): SlotBudget => storeSlotBudget(store.space("budgets"), { now: () => clock.now() });
    const delivered: { by: string; seqs: number[] }[] = [];
    const errors: unknown[] = [];
    const open = (by: string) =>
      new WakeScheduler({
        ...TIMING,
        maxWakesPerHour: 2,
        clock,
        isBusy: () => false,
        deliver: async (batch) => {
          delivered.push({ by, seqs: batch.items.map((i) => i.position.seq) });
        },
        onError: (error) => errors.push(error),
        budget: budget(),
      });
    const [a, b] = [open("a"), open("b")];
    // Each process sees its own channel messages for the subscription, one batch after another.
    for (const [seq, scheduler] of [a, b, a, b, a].entries()) {
      scheduler.add("sub1", "s1", item(seq + 1));
      await tick(100);
    }
    expect(delivered).toEqual([
      { by: "a", seqs: [1] },
      { by: "b", seqs: [2] },
    ]);
    expect(a.pendingCount("sub1") + b.pendingCount("sub1")).toBe(3);
    expect(await store.space("budgets").get(`${subscriptionWakeBudgetKey("sub1")}:1`)).toBeTypeOf("number");

    // Just before the hour nothing more goes; after it, one held batch per freed slot.
    await tick(HOUR_MS - 600);
    expect(delivered).toHaveLength(2);
    await tick(1_000);
    expect(delivered).toHaveLength(4);
    expect(a.pendingCount("sub1") + b.pendingCount("sub1")).toBe(0);
    expect(delivered.flatMap((d) => d.seqs).sort()).toEqual([1, 2, 3, 4, 5]);
    expect(errors).toEqual([]);
    await a.close();
    await b.close();
    await store.close();
  });
});

describe("WakeScheduler and a claim left by a process that died during its hand-over", () => {
  it("looks at the message again once that claim lapsed, and wakes for it", async () => {
    const { clock, store, tick } = await fakeClockStore(10);
    const delivered: number[][] = [];
    const open = (deliver: (batch: ReadyBatch) => Promise<void>, on = clock) =>
      claimingScheduler(on, store, {
        maxWakesPerHour: 100,
        deliver,
        onError: (error) => {
          throw error;
        },
      });
    // A claims message 1 and never finishes handing it over: its process is gone, and with it
    // A's clock, which would have renewed the claim.
    const gone = new ManualClock(clock.now());
    const a = open(() => new Promise<void>(() => undefined), gone);
    a.add("sub1", "s1", item(1));
    gone.advance(100);
    await tick(100);
    // B rebuilt message 1 from the shared buffer: A's claim holds it back for now.
    const b = open(async (batch) => {
      delivered.push(batch.items.map((i) => i.position.seq));
    });
    b.add("sub1", "s1", item(1));
    await tick(100);
    expect(delivered).toEqual([]);
    await tick(WAKE_CLAIM_TAKE_MS);
    await tick(100);
    expect(delivered).toEqual([[1]]);
    await b.close();
    await store.close();
  });
});

describe("WakeScheduler whose hand-over keeps failing while another process holds one of its messages", () => {
  it("puts back only the messages it claimed, keeps one recheck timer, and looks at the other once its claim lapsed", async () => {
    const { clock, store, tick } = await fakeClockStore(10);
    const open = (deliver: (batch: ReadyBatch) => Promise<void>, on = clock) =>
      claimingScheduler(on, store, { maxWakesPerHour: 1_000, deliver, onError: () => undefined });
    // A claims message 2 and never finishes handing it over: its process is gone, and with it
    // A's clock, which would have renewed the claim.
    const gone = new ManualClock(clock.now());
    const a = open(() => new Promise<void>(() => undefined), gone);
    a.add("sub1", "s1", item(2));
    gone.advance(100);
    await tick(100);
    // B has messages 1 and 2; every hand-over of its own fails (its session layer is shutting down).
    const tries: number[][] = [];
    const b = open(async (batch) => {
      tries.push(batch.items.map((i) => i.position.seq));
      throw new Error("the session layer is shutting down");
    });
    b.add("sub1", "s1", item(1));
    b.add("sub1", "s1", item(2));
    await tick(100);
    expect(tries).toEqual([[1]]);
    expect(b.pendingCount("sub1")).toBe(1);
    const before = clock.pending;
    // Retries in the next 9 minutes (15 s, 30 s, 60 s, 2 min, 4 min apart): still message 1 alone.
    for (let s = 0; s < 9 * 60; s += 5) await tick(5_000);
    expect(tries.length).toBeGreaterThan(3);
    expect(tries.every((seqs) => seqs.join() === "1")).toBe(true);
    expect(b.pendingCount("sub1")).toBe(1);
    expect(clock.pending).toBe(before);
    // A's claim lapses: B looks at message 2 again and tries it with its own.
    await tick(WAKE_CLAIM_TAKE_MS);
    expect(tries.at(-1)).toEqual([1, 2]);
    await b.close();
    await store.close();
  });
});

describe("WakeScheduler whose hand-over outlasts a claim in a process still running", () => {
  it("renews the claim until the wake-up is accepted: the other process never wakes for the message", async () => {
    const { clock, store, tick } = await fakeClockStore(10);
    const errors: unknown[] = [];
    const open = (deliver: (batch: ReadyBatch) => Promise<void>) =>
      claimingScheduler(clock, store, { maxWakesPerHour: 100, deliver, onError: (e) => errors.push(e) });
    let accept: (() => void) | undefined;
    const byA: number[][] = [];
    const a = open(async (batch) => {
      await new Promise<void>((resolve) => (accept = resolve));
      byA.push(batch.items.map((i) => i.position.seq));
    });
    a.add("sub1", "s1", item(1));
    await tick(100);
    expect(accept).toBeDefined();
    const byB: number[][] = [];
    const b = open(async (batch) => {
      byB.push(batch.items.map((i) => i.position.seq));
    });
    b.add("sub1", "s1", item(1));
    // Three claim lifetimes pass, a minute at a time, with A's hand-over under way all along.
    for (let passed = 0; passed < 3 * WAKE_CLAIM_TAKE_MS; passed += 60_000) await tick(60_000);
    expect(byB).toEqual([]);
    accept?.();
    await tick(0);
    await a.settled();
    expect(byA).toEqual([[1]]);
    // B's next look finds the message delivered.
    await tick(WAKE_CLAIM_TAKE_MS);
    await b.settled();
    expect(byB).toEqual([]);
    expect(b.pendingCount("sub1")).toBe(0);
    expect(errors).toEqual([]);
    await a.close();
    await b.close();
    await store.close();
  });
});
