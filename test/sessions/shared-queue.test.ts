/**
 * The shared input queue: an offer queues an entry with its dedupe claims (a redelivery changes
 * nothing) and hands the holder the queue when it takes the lease; entries taken into the record
 * stay in the shared queue until a save removes them, are never taken twice meanwhile, and are
 * taken again from the start by the next holder when this one lost the session before saving.
 * An entry the holder refuses, or cannot read, leaves the shared queue at once — refused entries
 * in a row in one write, before the next entry is taken; when that removal is refused (the lease
 * is gone) it stays, with the rest, for the next holder.
 */
import pino from "pino";
import { describe, expect, it, vi } from "vitest";
import type { LiveSession } from "../../src/sessions/live-session.js";
import {
  type SharedEntry,
  type SharedInputTaker,
  SharedQueue,
  sharedQueueName,
} from "../../src/sessions/shared-queue.js";
import { type FenceRef, StaleFenceError } from "../../src/store/coordination/coordination.js";
import { memoryCoordinationPerTest } from "./helpers/memory-coordination.js";

const live = { id: "s1" } as unknown as LiveSession;
const LEASE = "session:s1";

function entry(text: string): SharedEntry {
  return {
    message: {
      text,
      user: { id: "U1", name: "ana" },
      files: [],
      sentAt: new Date(0).toISOString(),
      dedupeKeys: [`k:${text}`],
    },
    steer: false,
    capped: true,
  } as unknown as SharedEntry;
}

const terms = (text: string) => ({
  claims: [{ namespace: "dedupe" as const, key: `in:k:${text}`, value: "seen" }],
  index: "active",
  lease: { key: LEASE, ttlMs: 10_000, owner: "p1" },
});

/** A taker that records what it takes, refuses what `refuses` says, and holds `fence`. */
function taker(
  taken: string[],
  fence: () => FenceRef | undefined,
  refuses: (text: string) => boolean = () => false,
  take: (text: string) => void = (text) => void taken.push(text),
): SharedInputTaker {
  return {
    admits: async (_live, e) => !refuses(e.message.text),
    take: async (_live, e) => take(e.message.text),
    fenceOf: fence,
  };
}

const silent = pino({ level: "silent" });

const memory = memoryCoordinationPerTest();

/** Offer `texts` in order: the fence of the lease one of them took, when one did. */
async function offerAll(queue: SharedQueue, texts: readonly string[]): Promise<FenceRef | undefined> {
  let fence: FenceRef | undefined;
  for (const text of texts) {
    const outcome = await queue.offer("s1", entry(text), terms(text));
    if (outcome.status === "taken") fence = { key: LEASE, fence: outcome.grant.fence };
  }
  return fence;
}

/**
 * A holder's queue: its taker records what it takes and refuses the texts that start with
 * "refused"; `offer` offers texts in order, and the lease the first of them took is held.
 */
function holder() {
  const taken: string[] = [];
  let fence: FenceRef | undefined;
  const refused = (text: string) => text.startsWith("refused");
  const queue = new SharedQueue(
    memory.coordination,
    taker(taken, () => fence, refused),
    silent,
  );
  const offer = async (texts: readonly string[]): Promise<FenceRef> => {
    const took = await offerAll(queue, texts);
    fence ??= took;
    if (!fence) throw new Error("no offer took the lease");
    return fence;
  };
  return { queue, taken, offer };
}

/** A save's removal of the `count` entries it carries from the shared queue, under `fence`. */
async function trim(fence: FenceRef, count: number): Promise<void> {
  await memory.coordination.fencedWrite(fence, [{ op: "trim", queue: sharedQueueName("s1"), count }]);
}

const queued = async () =>
  (await memory.coordination.items(sharedQueueName("s1"), 0)).map((raw) => JSON.parse(raw).message.text);

describe("SharedQueue", () => {
  it("takes offered entries in order, once each, and keeps them until a save trims them", async () => {
    const taken: string[] = [];
    let fence: FenceRef | undefined;
    const queue = new SharedQueue(
      memory.coordination,
      taker(taken, () => fence),
      silent,
    );
    const first = await queue.offer("s1", entry("one"), terms("one"));
    expect(first.status).toBe("taken");
    expect(await queue.offer("s1", entry("one again"), terms("one"))).toEqual({ status: "duplicate" });
    expect(await queue.offer("s1", entry("two"), terms("two"))).toMatchObject({ status: "queued" });
    if (first.status !== "taken") return;
    fence = { key: LEASE, fence: first.grant.fence };
    await queue.takeItems(live, first.items);
    await queue.collect(live);
    await queue.collect(live);
    expect(taken).toEqual(["one", "two"]);
    expect(queue.untrimmed("s1")).toBe(2);
    expect(await memory.coordination.items(sharedQueueName("s1"), 0)).toHaveLength(2);
    // The record's save removes what it carries, in its own fenced step.
    await queue.saveTaken("s1", queue.takenSoFar("s1"), (count) => trim(fence, count));
    expect(queue.untrimmed("s1")).toBe(0);
    await queue.offer("s1", entry("three"), terms("three"));
    await queue.collect(live);
    expect(taken).toEqual(["one", "two", "three"]);
  });

  it("a take that fails leaves the entry, and a holder that lost the session before saving leaves them all to the next", async () => {
    let crash = true;
    const taken: string[] = [];
    const fence = () => undefined;
    const queue = new SharedQueue(
      memory.coordination,
      taker(taken, fence, undefined, (text) => {
        if (crash) throw new Error("the process died while taking it");
        taken.push(text);
      }),
      silent,
    );
    await queue.offer("s1", entry("one"), terms("one"));
    await queue.offer("s1", entry("two"), terms("two"));
    await expect(queue.collect(live)).rejects.toThrow("died");
    crash = false;
    queue.forget("s1");
    await queue.collect(live);
    expect(taken).toEqual(["one", "two"]);
    expect(await memory.coordination.items(sharedQueueName("s1"), 0)).toHaveLength(2);
    // The lease is lost before any save: the next holder takes both from the start.
    queue.forget("s1");
    const successor: string[] = [];
    await new SharedQueue(memory.coordination, taker(successor, fence), silent).collect(live);
    expect(successor).toEqual(["one", "two"]);
  });

  it("a refused entry leaves the shared queue at once; those taken before and after it stay until the save trims them", async () => {
    const { queue, taken, offer } = holder();
    const fence = await offer(["one", "refused 1", "two"]);
    await queue.collect(live);
    expect(taken).toEqual(["one", "two"]);
    expect(await queued()).toEqual(["one", "two"]);
    expect(queue.untrimmed("s1")).toBe(2);
    await offer(["refused 2", "three", "refused 3"]);
    await queue.collect(live);
    expect(await queued()).toEqual(["one", "two", "three"]);
    // The save trims exactly what was taken: nothing taken is left, nothing untaken is lost.
    await queue.saveTaken("s1", queue.takenSoFar("s1"), async (count) => {
      expect(count).toBe(3);
      await trim(fence, count);
    });
    expect(await queued()).toEqual([]);
    expect(taken).toEqual(["one", "two", "three"]);
  });

  it("refused entries in a row leave the shared queue in one fenced write, made before the next entry is taken", async () => {
    const { queue, taken, offer } = holder();
    await offer(["one", "refused 1", "refused 2", "refused 3", "two", "refused 4", "refused 5"]);
    const writes = vi.spyOn(memory.coordination, "fencedWrite");
    await queue.collect(live);
    expect(taken).toEqual(["one", "two"]);
    expect(await queued()).toEqual(["one", "two"]);
    // One write per run of refused entries (five writes when each left on its own).
    const removed = writes.mock.calls.map(([, ops]) =>
      ops.map((op) => (op.op === "remove-item" ? JSON.parse(op.item).message.text : op.op)),
    );
    expect(removed).toEqual([
      ["refused 1", "refused 2", "refused 3"],
      ["refused 4", "refused 5"],
    ]);
  });

  it("refused entries leave before the next entry is taken: a save the take makes (steering) trims that entry, not them", async () => {
    const taken: string[] = [];
    let fence: FenceRef | undefined;
    const saveOnTake = async (text: string) => {
      taken.push(text);
      await queue.saveTaken("s1", queue.takenSoFar("s1"), (count) => trim(fence!, count));
    };
    const refuses = (text: string) => text.startsWith("refused");
    const queue: SharedQueue = new SharedQueue(
      memory.coordination,
      {
        admits: async (_live, e) => !refuses(e.message.text),
        take: (_live, e) => saveOnTake(e.message.text),
        fenceOf: () => fence,
      },
      silent,
    );
    fence = await offerAll(queue, ["refused 1", "refused 2", "steered"]);
    await queue.collect(live);
    expect(taken).toEqual(["steered"]);
    expect(queue.untrimmed("s1")).toBe(0);
    expect(await queued()).toEqual([]);
  });

  it("removes an unreadable entry at once, and never counts it", async () => {
    const { queue, taken, offer } = holder();
    await offer(["one"]);
    await memory.coordination.offer({
      queue: sharedQueueName("s1"),
      item: "{not json",
      claims: [],
      index: { set: "active", member: "s1" },
      lease: terms("x").lease,
    });
    await offer(["two"]);
    await queue.collect(live);
    expect(taken).toEqual(["one", "two"]);
    expect(queue.untrimmed("s1")).toBe(2);
    expect(await queued()).toEqual(["one", "two"]);
  });

  it("a refused entry whose removal is refused (the lease is gone) stops the take: it and the rest stay for the next holder", async () => {
    const { queue, taken, offer } = holder();
    await offer(["one", "refused", "two"]);
    // Another process took the session meanwhile.
    await memory.coordination.release(LEASE, (await memory.coordination.holder(LEASE))!);
    await memory.coordination.acquire(LEASE, 10_000, "p2");
    await expect(queue.collect(live)).rejects.toBeInstanceOf(StaleFenceError);
    expect(taken).toEqual(["one"]);
    expect(queue.untrimmed("s1")).toBe(1);
    expect(await queued()).toEqual(["one", "refused", "two"]);
  });
});
