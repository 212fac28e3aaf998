/**
 * The shared input queue: an offer queues an entry with its dedupe claims (a redelivery changes
 * nothing) and hands the holder the queue when it takes the lease; entries taken into the record
 * stay in the shared queue until a save removes them, are never taken twice meanwhile, and are
 * taken again from the start by the next holder when this one lost the session before saving.
 */
import os from "node:os";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { LiveSession } from "../../src/sessions/live-session.js";
import { type SharedEntry, SharedQueue, sharedQueueName } from "../../src/sessions/shared-queue.js";
import type { Coordination } from "../../src/store/coordination/coordination.js";
import { InProcessCoordination } from "../../src/store/coordination/in-process-coordination.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/store.js";

const live = { id: "s1" } as unknown as LiveSession;

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
  } as unknown as SharedEntry;
}

const terms = (text: string) => ({
  claims: [{ namespace: "dedupe" as const, key: `in:k:${text}`, value: "seen" }],
  index: "active",
  lease: { key: "session:s1", ttlMs: 10_000, owner: "p1" },
});

let store: Store;
let coordination: Coordination;
beforeEach(async () => {
  store = await createStore({ url: "memory:", dataDir: os.tmpdir() });
  coordination = new InProcessCoordination(store);
});
afterEach(async () => {
  await coordination.close();
  await store.close();
});

describe("SharedQueue", () => {
  it("takes offered entries in order, once each, and keeps them until a save trims them", async () => {
    const taken: string[] = [];
    const queue = new SharedQueue(
      coordination,
      async (_live, e) => void taken.push(e.message.text),
      () => undefined,
    );
    const first = await queue.offer("s1", entry("one"), terms("one"));
    expect(first.status).toBe("taken");
    expect(await queue.offer("s1", entry("one again"), terms("one"))).toEqual({ status: "duplicate" });
    expect(await queue.offer("s1", entry("two"), terms("two"))).toMatchObject({ status: "queued" });
    if (first.status !== "taken") return;
    await queue.takeItems(live, first.items);
    await queue.collect(live);
    await queue.collect(live);
    expect(taken).toEqual(["one", "two"]);
    expect(queue.untrimmed("s1")).toBe(2);
    expect(await coordination.items(sharedQueueName("s1"), 0)).toHaveLength(2);
    // The record's save removes what it carries, in its own fenced step.
    await coordination.fencedWrite({ key: "session:s1", fence: first.grant.fence }, [
      { op: "trim", queue: sharedQueueName("s1"), count: 2 },
    ]);
    queue.trimmed("s1", 2);
    expect(queue.untrimmed("s1")).toBe(0);
    await queue.offer("s1", entry("three"), terms("three"));
    await queue.collect(live);
    expect(taken).toEqual(["one", "two", "three"]);
  });

  it("a take that fails leaves the entry, and a holder that lost the session before saving leaves them all to the next", async () => {
    let crash = true;
    const taken: string[] = [];
    const queue = new SharedQueue(
      coordination,
      async (_live, e) => {
        if (crash) throw new Error("the process died while taking it");
        taken.push(e.message.text);
      },
      () => undefined,
    );
    await queue.offer("s1", entry("one"), terms("one"));
    await queue.offer("s1", entry("two"), terms("two"));
    await expect(queue.collect(live)).rejects.toThrow("died");
    crash = false;
    queue.forget("s1");
    await queue.collect(live);
    expect(taken).toEqual(["one", "two"]);
    expect(await coordination.items(sharedQueueName("s1"), 0)).toHaveLength(2);
    // The lease is lost before any save: the next holder takes both from the start.
    queue.forget("s1");
    const successor: string[] = [];
    await new SharedQueue(
      coordination,
      async (_live, e) => void successor.push(e.message.text),
      () => undefined,
    ).collect(live);
    expect(successor).toEqual(["one", "two"]);
  });

  it("drops an unreadable entry (reported) but counts it, so the save trims it too", async () => {
    const bad: unknown[] = [];
    const queue = new SharedQueue(
      coordination,
      async () => undefined,
      (_id, error) => bad.push(error),
    );
    await coordination.offer({
      queue: sharedQueueName("s1"),
      item: "{not json",
      claims: [],
      index: { set: "active", member: "s1" },
      lease: { key: "other", ttlMs: 1_000, owner: "p" },
    });
    await queue.collect(live);
    expect(bad).toHaveLength(1);
    expect(queue.untrimmed("s1")).toBe(1);
  });
});
