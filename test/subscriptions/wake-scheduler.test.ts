/**
 * WakeScheduler with a claim (several processes): two schedulers batch the same matched messages
 * (one saw them live, the other rebuilt them from the shared buffer); each message wakes its
 * subscription once, a batch whose messages were all claimed elsewhere is dropped; a session busy
 * in another process (the answer is a promise) holds its batch.
 */
import { describe, expect, it } from "vitest";
import type { ClaimOnce } from "../../src/approvals/expiry-timers.js";
import type { BufferEntry } from "../../src/subscriptions/buffer-entry.js";
import { systemClock } from "../../src/subscriptions/clock.js";
import { type ReadyBatch, WakeScheduler, type WakeItem } from "../../src/subscriptions/wake-scheduler.js";

function item(seq: number): WakeItem {
  const at = new Date().toISOString();
  return {
    entry: { id: `m${seq}`, seq } as BufferEntry,
    position: { epoch: "e1", seq, at },
  };
}

function scheduler(
  delivered: ReadyBatch[],
  claim?: ClaimOnce,
  isBusy: (sessionId: string) => boolean | Promise<boolean> = () => false,
  onError: (error: unknown) => void = (error) => {
    throw error;
  },
): WakeScheduler {
  return new WakeScheduler({
    debounceMs: 30,
    maxBatch: 50,
    maxWaitMs: 1_000,
    maxWakesPerHour: 100,
    busyRetryMs: 60,
    clock: systemClock,
    isBusy,
    deliver: async (batch) => {
      delivered.push(batch);
    },
    onError,
    ...(claim ? { claim } : {}),
  });
}

describe("WakeScheduler claims", () => {
  it("wakes once per matched message across two schedulers sharing a claim table", async () => {
    const claimed = new Set<string>();
    const claim: ClaimOnce = async (key) => {
      if (claimed.has(key)) return false;
      claimed.add(key);
      return true;
    };
    const seenByA: ReadyBatch[] = [];
    const seenByB: ReadyBatch[] = [];
    const a = scheduler(seenByA, claim);
    const b = scheduler(seenByB, claim);
    for (const seq of [1, 2, 3]) a.add("sub1", "s1", item(seq));
    await a.settled();
    await new Promise((resolve) => setTimeout(resolve, 100));
    await a.settled();
    // B rebuilt 2 and 3 from the buffer and saw 4 live.
    for (const seq of [2, 3, 4]) b.add("sub1", "s1", item(seq));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await b.settled();
    expect(seenByA.map((batch) => batch.items.map((i) => i.position.seq))).toEqual([[1, 2, 3]]);
    expect(seenByB.map((batch) => batch.items.map((i) => i.position.seq))).toEqual([[4]]);

    for (const seq of [1, 2]) b.add("sub1", "s1", item(seq));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await b.settled();
    expect(seenByB).toHaveLength(1);
    await a.close();
    await b.close();
  });

  it("without a claim, delivers every batch itself", async () => {
    const delivered: ReadyBatch[] = [];
    const only = scheduler(delivered);
    for (const seq of [1, 2]) only.add("sub1", "s1", item(seq));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await only.settled();
    expect(delivered.map((batch) => batch.items.length)).toEqual([2]);
    await only.close();
  });
});

describe("WakeScheduler and a session busy in another process", () => {
  it("holds a batch while the store says the session is busy, and delivers once it is not", async () => {
    const delivered: ReadyBatch[] = [];
    let busy = true;
    const asked: string[] = [];
    const waiting = scheduler(delivered, undefined, async (sessionId) => {
      asked.push(sessionId);
      return busy;
    });
    waiting.add("sub1", "s1", item(1));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(delivered).toEqual([]);
    expect(asked.length).toBeGreaterThan(0);
    busy = false;
    await new Promise((resolve) => setTimeout(resolve, 150));
    await waiting.settled();
    expect(delivered.map((batch) => batch.items.length)).toEqual([1]);
    await waiting.close();
  });

  it("delivers (the wake turn queues behind any turn) when asking the store fails, and reports it", async () => {
    const delivered: ReadyBatch[] = [];
    const errors: unknown[] = [];
    const failing = scheduler(
      delivered,
      undefined,
      async () => {
        throw new Error("redis is down");
      },
      (error) => errors.push(error),
    );
    failing.add("sub1", "s1", item(1));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await failing.settled();
    expect(delivered).toHaveLength(1);
    expect(String(errors[0])).toContain("redis is down");
    await failing.close();
  });
});
