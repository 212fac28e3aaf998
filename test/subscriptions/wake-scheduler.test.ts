/**
 * WakeScheduler with a claim (several processes): two schedulers batch the same matched messages
 * (one saw them live, the other rebuilt them from the shared buffer); each message wakes its
 * subscription once, a batch whose messages were all claimed elsewhere is dropped.
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

function scheduler(delivered: ReadyBatch[], claim?: ClaimOnce): WakeScheduler {
  return new WakeScheduler({
    debounceMs: 30,
    maxBatch: 50,
    maxWaitMs: 1_000,
    maxWakesPerHour: 100,
    clock: systemClock,
    isBusy: () => false,
    deliver: async (batch) => {
      delivered.push(batch);
    },
    onError: (error) => {
      throw error;
    },
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
