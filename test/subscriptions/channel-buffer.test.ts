import os from "node:os";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createStore } from "../../src/store/create-store.js";
import type { KeyValueSpace, Store } from "../../src/store/store.js";
import { spaceLike } from "../support/space-like.js";
import type { BufferEntryInput } from "../../src/subscriptions/buffer-entry.js";
import { ChannelBuffer } from "../../src/subscriptions/channel-buffer.js";
import {
  BUFFER_HEAD_KIND,
  bufferHeadKey,
  bufferPageKey,
} from "../../src/subscriptions/channel-buffer-store-shapes.js";
import { ReadCursors } from "../../src/subscriptions/read-cursors.js";
import { manualClock } from "./support-shared-buffer.js";

const CH = "slack:T1:CDEPLOY";
const START = Date.parse("2026-11-30T09:00:00Z");

/** A space that records which keys were written. */
function recording(space: KeyValueSpace): KeyValueSpace & { writes: string[] } {
  const writes: string[] = [];
  return {
    writes,
    get: (key) => space.get(key),
    set: async (key, value, ttl) => {
      writes.push(key);
      await space.set(key, value, ttl);
    },
    delete: (key) => space.delete(key),
    setIfAbsent: (key, value, ttl) => space.setIfAbsent(key, value, ttl),
    replaceIf: (key, expected, value, ttlMs) => space.replaceIf(key, expected, value, ttlMs),
    deleteIf: (key, expected) => space.deleteIf(key, expected),
  };
}

function entry(n: number, at = START + n * 1_000, extra: Partial<BufferEntryInput> = {}): BufferEntryInput {
  return {
    id: `m${n}`,
    author: { id: "UBOB", name: "Bob", isBot: false },
    at: new Date(at).toISOString(),
    text: `message ${n}`,
    ...extra,
  };
}

describe("ChannelBuffer", () => {
  let store: Store;
  let clock: ReturnType<typeof manualClock>;

  beforeEach(async () => {
    store = await createStore({ url: "memory:", dataDir: os.tmpdir() });
    clock = manualClock(START);
  });
  afterEach(async () => {
    await store.close();
  });

  it("appends write only the last page and the head, never the whole buffer", async () => {
    const space = recording(store.space("buffers"));
    const buffer = new ChannelBuffer(space, { maxEntries: 100, maxAgeMs: 86_400_000, pageSize: 10, clock });
    for (let n = 1; n <= 25; n += 1) await buffer.append(CH, entry(n));
    space.writes.length = 0;
    await buffer.append(CH, entry(26));
    expect(space.writes).toEqual([bufferPageKey(CH, 2), bufferHeadKey(CH)]);
    const read = await buffer.read(CH, { limit: 100 });
    expect(read?.entries.map((e) => e.seq)).toEqual(Array.from({ length: 26 }, (_, i) => i + 1));
  });

  it("commits a burst to one channel together and keeps the order of the calls", async () => {
    const space = recording(store.space("buffers"));
    const buffer = new ChannelBuffer(space, { maxEntries: 100, maxAgeMs: 86_400_000, pageSize: 50, clock });
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => buffer.append(CH, entry(i + 1))));
    expect(results.map((r) => r?.entry.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(space.writes.length).toBeLessThanOrEqual(4);
  });

  it("buffers a burst's entries at the time of their write, together, and a later write's at its own", async () => {
    // A clock that moves on each time it is read: entries buffered at one reading share its time.
    const ticking = { ...clock, now: () => (clock.time += 1_000) };
    const buffer = new ChannelBuffer(store.space("buffers"), {
      maxEntries: 100,
      maxAgeMs: 86_400_000,
      clock: ticking,
    });
    const burst = await Promise.all([entry(1), entry(2), entry(3)].map((e) => buffer.append(CH, e)));
    const later = await buffer.append(CH, entry(4));
    // The first append's write takes itself alone; the other two are committed together after it.
    const [first, second, third, fourth] = [...burst, later].map((r) =>
      Date.parse(r?.entry.bufferedAt ?? ""),
    );
    expect(second).toBe(third);
    expect([first! < second!, third! < fourth!]).toEqual([true, true]);
  });

  it("refuses a message its pages could not be read back with, and keeps the others readable", async () => {
    const space = store.space("buffers");
    const buffer = new ChannelBuffer(space, { maxEntries: 100, maxAgeMs: 86_400_000, pageSize: 2, clock });
    await buffer.append(CH, entry(1));
    await expect(buffer.append(CH, entry(2, START, { at: "yesterday" }))).rejects.toThrow(
      /message not stored in slack:T1:CDEPLOY \(at: /,
    );
    await buffer.append(CH, entry(3));
    await buffer.append(CH, entry(4));
    // A fresh buffer reads the stored pages, as after a restart.
    const reread = new ChannelBuffer(space, { maxEntries: 100, maxAgeMs: 86_400_000, pageSize: 2, clock });
    const read = await reread.read(CH, { limit: 100 });
    expect(read?.entries.map((e) => e.id)).toEqual(["m1", "m3", "m4"]);
  });

  it("stores a duplicate message id once", async () => {
    const buffer = new ChannelBuffer(store.space("buffers"), { maxEntries: 10, maxAgeMs: 86_400_000, clock });
    expect(await buffer.append(CH, entry(1))).toMatchObject({ entry: { seq: 1 } });
    expect(await buffer.append(CH, entry(1))).toBeUndefined();
    const [a, b] = await Promise.all([buffer.append(CH, entry(2)), buffer.append(CH, entry(2))]);
    expect([a?.entry.seq, b]).toEqual([2, undefined]);
  });

  it("keeps at most maxEntries and deletes pages that fell below the floor", async () => {
    const space = store.space("buffers");
    const buffer = new ChannelBuffer(space, { maxEntries: 25, maxAgeMs: 86_400_000, pageSize: 10, clock });
    for (let n = 1; n <= 60; n += 1) await buffer.append(CH, entry(n));
    const read = await buffer.read(CH, { limit: 100 });
    expect(read?.entries.map((e) => e.seq)).toEqual(Array.from({ length: 25 }, (_, i) => i + 36));
    expect(await space.get(bufferPageKey(CH, 0))).toBeUndefined();
    expect(await space.get(bufferPageKey(CH, 2))).toBeUndefined();
    expect(await space.get(bufferPageKey(CH, 3))).toBeDefined();
  });

  it("hides entries older than the age cap and drops stale pages", async () => {
    const space = store.space("buffers");
    const buffer = new ChannelBuffer(space, { maxEntries: 100, maxAgeMs: 60_000, pageSize: 5, clock });
    for (let n = 1; n <= 7; n += 1) await buffer.append(CH, entry(n, START));
    clock.time = START + 30_000;
    for (let n = 8; n <= 12; n += 1) await buffer.append(CH, entry(n, clock.time));
    clock.time = START + 75_000;
    expect((await buffer.read(CH, { limit: 100 }))?.entries.map((e) => e.seq)).toEqual([8, 9, 10, 11, 12]);
    await buffer.append(CH, entry(13, clock.time));
    expect(await space.get(bufferPageKey(CH, 0))).toBeUndefined();
    expect((await buffer.read(CH, { limit: 100 }))?.entries.map((e) => e.seq)).toEqual([
      8, 9, 10, 11, 12, 13,
    ]);
  });

  it("reads after a position, since a time, within a thread, with a limit and a remaining count", async () => {
    const buffer = new ChannelBuffer(store.space("buffers"), {
      maxEntries: 100,
      maxAgeMs: 86_400_000,
      pageSize: 4,
      clock,
    });
    for (let n = 1; n <= 10; n += 1)
      await buffer.append(CH, entry(n, START + n * 1_000, n % 2 ? { thread: "5" } : {}));
    const epoch = (await buffer.epochOf(CH))!;
    const after = await buffer.read(CH, {
      after: { epoch, seq: 6, at: new Date(START).toISOString() },
      limit: 3,
    });
    expect(after?.entries.map((e) => e.seq)).toEqual([7, 8, 9]);
    expect(after?.remaining).toBe(1);
    const since = await buffer.read(CH, { since: new Date(START + 9_000).toISOString(), limit: 10 });
    expect(since?.entries.map((e) => e.seq)).toEqual([9, 10]);
    const thread = await buffer.read(CH, { thread: "5", limit: 10 });
    expect(thread?.entries.map((e) => e.seq)).toEqual([1, 3, 5, 7, 9]);
    const byTime = await buffer.read(CH, {
      after: { epoch: "", seq: 0, at: new Date(START + 8_000).toISOString() },
      limit: 10,
    });
    expect(byTime?.entries.map((e) => e.seq)).toEqual([9, 10]);
  });

  it("says how far its dropped count reaches, so a reader moved there is not told again (a thread with none left too)", async () => {
    const buffer = new ChannelBuffer(store.space("buffers"), {
      maxEntries: 5,
      maxAgeMs: 86_400_000,
      pageSize: 5,
      clock,
    });
    await buffer.append(CH, entry(1, START, { thread: "T" }));
    for (let n = 2; n <= 21; n += 1) await buffer.append(CH, entry(n));
    const epoch = (await buffer.epochOf(CH))!;
    const cursor = { epoch, seq: 1, at: new Date(START).toISOString() };
    // Entries 2-16 fell below the floor unread; the thread has nothing newer.
    const first = await buffer.read(CH, { after: cursor, thread: "T", limit: 10 });
    expect(first).toMatchObject({ entries: [], dropped: 15, droppedThrough: { epoch, seq: 16 } });
    const again = await buffer.read(CH, { after: first!.droppedThrough!, thread: "T", limit: 10 });
    expect(again).toMatchObject({ entries: [], dropped: 0, droppedThrough: undefined });
  });

  it("counts entries aged out only up to the last entry it returns", async () => {
    const buffer = new ChannelBuffer(store.space("buffers"), {
      maxEntries: 100,
      maxAgeMs: 60_000,
      pageSize: 10,
      clock,
    });
    for (let n = 1; n <= 3; n += 1) await buffer.append(CH, entry(n, START));
    await buffer.append(CH, entry(4, START + 50_000));
    // Sent (by its own time) long before it arrived: aged out, after an entry still kept.
    await buffer.append(CH, entry(5, START));
    await buffer.append(CH, entry(6, START + 50_000));
    clock.time = START + 75_000;
    const epoch = (await buffer.epochOf(CH))!;
    const first = await buffer.read(CH, {
      after: { epoch, seq: 0, at: new Date(START).toISOString() },
      limit: 1,
    });
    expect(first).toMatchObject({ remaining: 1, dropped: 3, droppedThrough: { seq: 3 } });
    expect(first?.entries.map((e) => e.seq)).toEqual([4]);
    const next = await buffer.read(CH, { after: { epoch, seq: 4, at: first!.entries[0]!.at }, limit: 1 });
    expect(next).toMatchObject({ remaining: 0, dropped: 1, droppedThrough: { seq: 5 } });
    expect(next?.entries.map((e) => e.seq)).toEqual([6]);
  });

  it("survives a new instance on the same space, then continues the sequence", async () => {
    const space = store.space("buffers");
    const first = new ChannelBuffer(space, { maxEntries: 100, maxAgeMs: 86_400_000, pageSize: 3, clock });
    for (let n = 1; n <= 7; n += 1) await first.append(CH, entry(n));
    const second = new ChannelBuffer(space, { maxEntries: 100, maxAgeMs: 86_400_000, pageSize: 3, clock });
    expect(await second.append(CH, entry(7))).toBeUndefined();
    expect(await second.append(CH, entry(8))).toMatchObject({ entry: { seq: 8 } });
    expect((await second.read(CH, { limit: 100 }))?.entries.map((e) => e.id)).toEqual(
      Array.from({ length: 8 }, (_, i) => `m${i + 1}`),
    );
  });

  it("caps long texts with a visible marker", async () => {
    const buffer = new ChannelBuffer(store.space("buffers"), {
      maxEntries: 5,
      maxAgeMs: 86_400_000,
      maxEntryChars: 10,
      clock,
    });
    const stored = await buffer.append(CH, { ...entry(1), text: "x".repeat(25) });
    expect(stored?.entry.text).toBe(`${"x".repeat(10)}… [15 more characters not kept]`);
  });

  it("drop forgets the channel, and a new buffer starts a new epoch", async () => {
    const buffer = new ChannelBuffer(store.space("buffers"), { maxEntries: 5, maxAgeMs: 86_400_000, clock });
    await buffer.append(CH, entry(1));
    const before = await buffer.epochOf(CH);
    await buffer.drop(CH);
    expect(await buffer.read(CH, { limit: 5 })).toBeUndefined();
    await buffer.append(CH, entry(2));
    expect(await buffer.epochOf(CH)).not.toBe(before);
  });

  it("drop deletes the channel's pages, not only its head, also dropped by an instance that cached nothing", async () => {
    const space = store.space("buffers");
    const options = { maxEntries: 100, maxAgeMs: 86_400_000, pageSize: 2, clock };
    const pagesLeft = () => Promise.all([0, 1, 2].map((i) => space.get(bufferPageKey(CH, i))));
    const buffer = new ChannelBuffer(space, options);
    for (let n = 1; n <= 5; n += 1) await buffer.append(CH, entry(n));
    expect((await pagesLeft()).every((page) => page !== undefined)).toBe(true);
    await buffer.drop(CH);
    expect(await buffer.read(CH, { limit: 10 })).toBeUndefined();
    expect(await pagesLeft()).toEqual([undefined, undefined, undefined]);

    for (let n = 6; n <= 8; n += 1) await buffer.append(CH, entry(n));
    await new ChannelBuffer(space, options).drop(CH);
    expect(await space.get(bufferHeadKey(CH))).toBeUndefined();
    expect(await pagesLeft()).toEqual([undefined, undefined, undefined]);
  });

  it("serialises no head alone: only shared mode compares the head stored with the one it keeps", async () => {
    const space = store.space("buffers");
    await new ChannelBuffer(space, { maxEntries: 100, maxAgeMs: 86_400_000, clock }).append(CH, entry(1));
    const stringify = vi.spyOn(JSON, "stringify");
    try {
      const buffer = new ChannelBuffer(space, { maxEntries: 100, maxAgeMs: 86_400_000, clock });
      for (let n = 2; n <= 4; n += 1) await buffer.append(CH, entry(n));
      expect((await buffer.read(CH, { limit: 10 }))?.entries).toHaveLength(4);
      expect(stringify.mock.calls.filter(([value]) => value?.kind === BUFFER_HEAD_KIND)).toEqual([]);
    } finally {
      stringify.mockRestore();
    }
  });

  it("reads only the pages it does not keep: the last two of its own writes are kept", async () => {
    const space = store.space("buffers");
    const reads: string[] = [];
    const counted = spaceLike(space, {
      get: <T>(key: string) => {
        reads.push(key);
        return space.get<T>(key);
      },
    });
    const buffer = new ChannelBuffer(counted, { maxEntries: 100, maxAgeMs: 86_400_000, pageSize: 2, clock });
    for (let n = 1; n <= 5; n += 1) await buffer.append(CH, entry(n));
    reads.length = 0;
    const read = await buffer.read(CH, { limit: 10 });
    expect(read?.entries.map((e) => e.text)).toEqual([1, 2, 3, 4, 5].map((n) => `message ${n}`));
    expect(reads).toEqual([bufferPageKey(CH, 0)]);
  });

  it("rejects an append when the store write fails and keeps the previous state", async () => {
    const space = store.space("buffers");
    let failing = false;
    const flaky = spaceLike(space, {
      set: async (key, value, ttl) => {
        if (failing) throw new Error("disk full");
        await space.set(key, value, ttl);
      },
    });
    const buffer = new ChannelBuffer(flaky, { maxEntries: 5, maxAgeMs: 86_400_000, clock });
    await buffer.append(CH, entry(1));
    failing = true;
    await expect(buffer.append(CH, entry(2))).rejects.toThrow("disk full");
    failing = false;
    expect(await buffer.append(CH, entry(3))).toMatchObject({ entry: { seq: 2 } });
  });
});

describe("ReadCursors", () => {
  it("only moves forward, compares by seq within an epoch and by time across epochs", async () => {
    const store = await createStore({ url: "memory:", dataDir: os.tmpdir() });
    const cursors = new ReadCursors(store.space("buffers"), 60_000);
    const at = (s: number) => new Date(START + s * 1_000).toISOString();
    await cursors.advance("s1", CH, { epoch: "e1", seq: 5, at: at(5) });
    expect(await cursors.advance("s1", CH, { epoch: "e1", seq: 3, at: at(9) })).toMatchObject({ seq: 5 });
    expect(await cursors.advance("s1", CH, { epoch: "e2", seq: 1, at: at(4) })).toMatchObject({
      epoch: "e1",
    });
    expect(await cursors.advance("s1", CH, { epoch: "e2", seq: 1, at: at(6) })).toMatchObject({
      epoch: "e2",
    });
    expect(await cursors.get("s2", CH)).toBeUndefined();
    await cursors.delete("s1", CH);
    expect(await cursors.get("s1", CH)).toBeUndefined();
    await store.close();
  });
});
