/**
 * Two processes (each with its own store connection) appending to one channel's buffer on a real
 * redis-server: turn by turn and all at once, every message of both is kept once, in one order,
 * and the pages a lost write left behind are deleted.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { getAll, type KeyValueSpace } from "../../src/store/store.js";
import { ChannelBuffer } from "../../src/subscriptions/channel-buffer.js";
import { BUFFER_HEAD_KIND } from "../../src/subscriptions/channel-buffer-store-shapes.js";
import { spaceLike } from "../support/space-like.js";
import { BufferServer, bufferInput } from "./support-shared-buffer.js";

const CH = "slack:T1:CDEPLOY";
const OPTIONS = { maxEntries: 1_000, maxAgeMs: 86_400_000, pageSize: 3, shared: true };

/** A space that keeps which page keys are stored after its own writes and deletes. */
function pageTracking(space: KeyValueSpace, live: Set<string>): KeyValueSpace {
  return spaceLike(space, {
    set: async (key, value, ttl) => {
      await space.set(key, value, ttl);
      if (key.startsWith("page:")) live.add(key);
    },
    delete: async (key) => {
      live.delete(key);
      return space.delete(key);
    },
  });
}

/**
 * `space` with each round trip its reads make recorded: the keys asked for (`trips`), or the kinds
 * of key ("head", "page+page" for one getMany of two pages: `kinds`); `clear` forgets them.
 */
function recordingTrips(space: KeyValueSpace) {
  const trips: string[][] = [];
  const counted = spaceLike(space, {
    get: <T>(key: string) => {
      trips.push([key]);
      return space.get<T>(key);
    },
    getMany: <T>(keys: readonly string[]) => {
      trips.push([...keys]);
      return getAll<T>(space, keys);
    },
  });
  const kinds = () => trips.map((keys) => keys.map((key) => key.slice(0, key.indexOf(":"))).join("+"));
  const clear = () => {
    trips.length = 0;
  };
  return { counted, trips, kinds, clear };
}

describe("one channel's buffer written by two processes", () => {
  let server: BufferServer;
  let live: Set<string>;

  beforeEach(async () => {
    server = await BufferServer.start();
    live = new Set();
  }, 20_000);

  afterEach(() => server.stop());

  async function openBuffer(): Promise<ChannelBuffer> {
    return new ChannelBuffer(pageTracking(await server.openSpace(), live), OPTIONS);
  }

  const texts = async (buffer: ChannelBuffer) =>
    (await buffer.read(CH, { limit: 100 }))?.entries.map((e) => `${e.seq}:${e.text}`);

  it("reads only the head again while no process changed it, and the pages once one did", async () => {
    const space = await server.openSpace();
    const reads: string[] = [];
    const counted = spaceLike(space, {
      get: <T>(key: string) => {
        reads.push(key.slice(0, key.indexOf(":")));
        return space.get<T>(key);
      },
    });
    const a = new ChannelBuffer(counted, OPTIONS);
    const b = await openBuffer();
    await a.append(CH, bufferInput("m1"));
    reads.length = 0;
    expect(await texts(a)).toEqual(["1:m1"]);
    expect(reads).toEqual(["head"]);
    await b.append(CH, bufferInput("m2"));
    reads.length = 0;
    expect(await texts(a)).toEqual(["1:m1", "2:m2"]);
    expect(reads).toEqual(["head", "page"]);
  });

  it("reads the last two pages another process wrote in one round trip", async () => {
    const { counted, kinds } = recordingTrips(await server.openSpace());
    const a = new ChannelBuffer(counted, OPTIONS);
    const b = await openBuffer();
    const m2 = bufferInput("m2");
    // Pages of 3: m4 alone on the last.
    for (const input of [bufferInput("m1"), m2, bufferInput("m3"), bufferInput("m4")])
      await b.append(CH, input);
    expect(await a.epochOf(CH)).toBe(await b.epochOf(CH));
    expect(kinds()).toEqual(["head", "page+page"]);
    // The page before the last was read too: its ids are known as duplicates.
    expect(await a.append(CH, m2)).toBeUndefined();
    expect(await texts(a)).toEqual(["1:m1", "2:m2", "3:m3", "4:m4"]);
  });

  it("reads each page of a head another process wrote once: the last two in one round trip, the others after", async () => {
    const { counted, trips, kinds } = recordingTrips(await server.openSpace());
    const b = await openBuffer();
    // Pages of 3: pages 0 and 1 full, m7 alone on page 2.
    for (let n = 1; n <= 7; n++) await b.append(CH, bufferInput(`m${n}`));
    const a = new ChannelBuffer(counted, OPTIONS);
    expect(await texts(a)).toEqual(["1:m1", "2:m2", "3:m3", "4:m4", "5:m5", "6:m6", "7:m7"]);
    expect(kinds()).toEqual(["head", "page+page", "page"]);
    const pagesRead = trips.flat().filter((k) => k.startsWith("page:"));
    expect(new Set(pagesRead).size).toBe(pagesRead.length);
  });

  it("reads only the head while it is unchanged, the pages it keeps from a read or its own writes not again", async () => {
    const { counted, kinds, clear } = recordingTrips(await server.openSpace());
    const b = await openBuffer();
    // Pages of 3: page 0 (m1-m3) and page 1 (m4-m5).
    for (let n = 1; n <= 5; n++) await b.append(CH, bufferInput(`m${n}`));
    const a = new ChannelBuffer(counted, OPTIONS);
    const all = ["1:m1", "2:m2", "3:m3", "4:m4", "5:m5"];
    expect(await texts(a)).toEqual(all);
    expect(kinds()).toEqual(["head", "page+page"]);
    clear();
    expect(await texts(a)).toEqual(all);
    expect(kinds()).toEqual(["head"]);
    // Its own write onto the last page keeps the page before it; onto a new page, the one it wrote.
    await a.append(CH, bufferInput("m6"));
    clear();
    expect(await texts(a)).toEqual([...all, "6:m6"]);
    expect(kinds()).toEqual(["head"]);
    await a.append(CH, bufferInput("m7"));
    clear();
    expect(await texts(a)).toEqual([...all, "6:m6", "7:m7"]);
    expect(kinds()).toEqual(["head", "page"]);
  });

  it("serialises the head it keeps once, not again on each read that finds it unchanged", async () => {
    const a = await openBuffer();
    await a.append(CH, bufferInput("m1"));
    const stringify = vi.spyOn(JSON, "stringify");
    try {
      for (let n = 0; n < 3; n++) expect(await texts(a)).toEqual(["1:m1"]);
      const heads = stringify.mock.calls.filter(([value]) => value?.kind === BUFFER_HEAD_KIND);
      // The head read from the store, once per read; never the kept one again.
      expect(heads).toHaveLength(3);
    } finally {
      stringify.mockRestore();
    }
  });

  it("keeps every message when they take turns", async () => {
    const a = await openBuffer();
    const b = await openBuffer();
    await a.append(CH, bufferInput("m1"));
    await b.append(CH, bufferInput("m2"));
    await a.append(CH, bufferInput("m3"));
    await b.append(CH, bufferInput("m4"));
    const expected = ["1:m1", "2:m2", "3:m3", "4:m4"];
    expect(await texts(await openBuffer())).toEqual(expected);
    expect(await texts(a)).toEqual(expected);
    expect(await texts(b)).toEqual(expected);
  });

  it("keeps every message of both when they append at once, and no page a lost write made", async () => {
    const a = await openBuffer();
    const b = await openBuffer();
    const burst = (buffer: ChannelBuffer, name: string) =>
      Array.from({ length: 20 }, (_, i) => buffer.append(CH, bufferInput(`${name}${i}`)));
    const results = await Promise.all([...burst(a, "a"), ...burst(b, "b")]);
    expect(results.every((r) => r !== undefined)).toBe(true);
    const read = await (await openBuffer()).read(CH, { limit: 100 });
    expect(read?.entries.map((e) => e.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(new Set(read?.entries.map((e) => e.text)).size).toBe(40);
    // 40 entries on pages of 3: 14 pages stored, nothing else left over.
    expect(live.size).toBe(14);
  });
});
