/**
 * The shared input queue keeps an entry until it is saved: a holder that dies while taking it
 * (or right after, before removing it) leaves it for the next holder, which takes it once —
 * never lost, never queued twice.
 */
import os from "node:os";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { LiveSession } from "../../src/sessions/live-session.js";
import { type SharedEntry, SharedQueue, sharedQueueName } from "../../src/sessions/shared-queue.js";
import type { Coordination } from "../../src/store/coordination/coordination.js";
import { InProcessCoordination } from "../../src/store/coordination/in-process-coordination.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/store.js";

/** The part of a LiveSession the queue uses: its id and the dedupe keys it has saved. */
function session(id: string): { live: LiveSession; saved: string[] } {
  const saved: string[] = [];
  const live = {
    id,
    isRedelivery: async (keys: readonly string[]) => keys.some((key) => saved.includes(key)),
    recordDelivery: async () => undefined,
  } as unknown as LiveSession;
  return { live, saved };
}

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
  it("a take that fails leaves the entry for the next collection, which takes it in order", async () => {
    const { live, saved } = session("s1");
    let crash = true;
    const taken: string[] = [];
    const queue = new SharedQueue(
      coordination,
      async (_live, e) => {
        if (crash) throw new Error("process died while saving");
        taken.push(e.message.text);
        saved.push(...(e.message.dedupeKeys ?? []));
      },
      () => undefined,
    );
    await queue.offer("s1", entry("one"));
    await queue.offer("s1", entry("two"));
    await expect(queue.collect(live)).rejects.toThrow("process died");
    expect(await coordination.queueLength(sharedQueueName("s1"))).toBe(2);
    crash = false;
    await queue.collect(live);
    expect(taken).toEqual(["one", "two"]);
    expect(await coordination.queueLength(sharedQueueName("s1"))).toBe(0);
  });

  it("an entry saved but not yet removed when its holder died is dropped as a redelivery, not taken twice", async () => {
    const { live, saved } = session("s2");
    const taken: string[] = [];
    const take = async (_live: LiveSession, e: SharedEntry) => {
      taken.push(e.message.text);
      saved.push(...(e.message.dedupeKeys ?? []));
    };
    const dying: Coordination = Object.create(coordination, {
      removeHead: { value: async () => Promise.reject(new Error("process died before removing it")) },
    });
    await new SharedQueue(coordination, take, () => undefined).offer("s2", entry("one"));
    await expect(new SharedQueue(dying, take, () => undefined).collect(live)).rejects.toThrow("process died");
    await new SharedQueue(coordination, take, () => undefined).collect(live);
    expect(taken).toEqual(["one"]);
    expect(await coordination.queueLength(sharedQueueName("s2"))).toBe(0);
  });

  it("an unreadable entry is reported and removed, and the ones after it are taken", async () => {
    const { live } = session("s3");
    const taken: string[] = [];
    const bad: string[] = [];
    const queue = new SharedQueue(
      coordination,
      async (_live, e) => {
        taken.push(e.message.text);
      },
      (sessionId) => bad.push(sessionId),
    );
    await coordination.push(sharedQueueName("s3"), "{not json");
    await queue.offer("s3", entry("after"));
    await queue.collect(live);
    expect(bad).toEqual(["s3"]);
    expect(taken).toEqual(["after"]);
  });
});
