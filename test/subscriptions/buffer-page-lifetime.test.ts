/**
 * A shared channel buffer's pages on a real redis-server expire once nothing on them may be shown
 * (their entries past the age cap, and a margin more): a page a crashed write left before its head
 * write, or one behind a head that cannot be read, does not keep channel text for ever; a page a
 * head lists lasts as long as its newest entry is shown (under the writer's age cap), and once
 * expired reads as forgotten entries instead of failing the buffer — also for a reader whose cap
 * was raised since, and counted for a thread reader as while the page was stored.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { KeyValueSpace } from "../../src/store/store.js";
import { spaceLike } from "../support/space-like.js";
import { ChannelBuffer } from "../../src/subscriptions/channel-buffer.js";
import { bufferHeadKey } from "../../src/subscriptions/channel-buffer-store-shapes.js";
import { BufferServer, bufferInput, manualClock } from "./support-shared-buffer.js";

const CH = "slack:T1:CLIFE";
const DAY = 86_400_000;
const MAX_AGE = 2 * DAY;
const START = Date.parse("2026-11-30T09:00:00Z");

describe("a shared channel buffer's page lifetime", () => {
  let server: BufferServer;
  let raw: BufferServer["raw"];
  let clock: ReturnType<typeof manualClock>;

  beforeEach(async () => {
    server = await BufferServer.start();
    raw = server.raw;
    clock = manualClock(START);
  }, 20_000);

  afterEach(() => server.stop());

  const openSpace = () => server.openSpace();

  const options = (maxAgeMs = MAX_AGE, shared = true) => ({
    maxEntries: 1_000,
    maxAgeMs,
    pageSize: 3,
    shared,
    clock,
  });

  /** Delete the channel's stored pages, as their TTL does. */
  async function expirePages(): Promise<void> {
    for (const key of (await raw.keys("*")).filter((k) => k.includes(`page:${CH}:`))) await raw.del(key);
  }

  /** Each stored page key of the channel and its remaining lifetime in ms (-1: none). */
  async function pageTtls(): Promise<number[]> {
    const keys = (await raw.keys("*")).filter((k) => k.includes(`page:${CH}:`));
    return Promise.all(keys.map((k) => raw.pTTL(k)));
  }

  it("lets a page expire that a process crashed after writing, before its head write", async () => {
    const space = await openSpace();
    let crashed = false;
    const dying: KeyValueSpace = {
      get: (key) => (crashed ? Promise.reject(new Error("process gone")) : space.get(key)),
      set: async (key, value, ttl) => {
        if (crashed) throw new Error("process gone");
        await space.set(key, value, ttl);
        if (key.startsWith("page:")) crashed = true;
      },
      delete: (key) => (crashed ? Promise.reject(new Error("process gone")) : space.delete(key)),
      setIfAbsent: (key, value, ttl) =>
        crashed ? Promise.reject(new Error("process gone")) : space.setIfAbsent(key, value, ttl),
      replaceIf: (key, expected, value, ttl) =>
        crashed ? Promise.reject(new Error("process gone")) : space.replaceIf(key, expected, value, ttl),
      deleteIf: (key, expected) =>
        crashed ? Promise.reject(new Error("process gone")) : space.deleteIf(key, expected),
    };
    await expect(new ChannelBuffer(dying, options()).append(CH, bufferInput("one", START))).rejects.toThrow(
      "process gone",
    );
    expect(await (await openSpace()).get(bufferHeadKey(CH))).toBeUndefined();
    const ttls = await pageTtls();
    expect(ttls).toHaveLength(1);
    expect(ttls[0]).toBeGreaterThan(MAX_AGE);
    expect(ttls[0]).toBeLessThanOrEqual(MAX_AGE + DAY);
  });

  it("lets the pages behind a head that cannot be read expire after a drop", async () => {
    const space = await openSpace();
    const buffer = new ChannelBuffer(space, options());
    for (const text of ["one", "two", "three", "four"]) await buffer.append(CH, bufferInput(text, START));
    await space.set(bufferHeadKey(CH), { kind: "channel-buffer-head", version: 1, data: { broken: true } });
    await buffer.drop(CH);
    const ttls = await pageTtls();
    expect(ttls).toHaveLength(2);
    for (const ttl of ttls) expect(ttl).toBeGreaterThan(MAX_AGE);
  });

  it("keeps a page as long as its newest entry is shown, even one sent later than now", async () => {
    const buffer = new ChannelBuffer(await openSpace(), options());
    await buffer.append(CH, bufferInput("from a clock ahead", START + 3 * DAY));
    const [ttl] = await pageTtls();
    expect(ttl).toBeGreaterThan(3 * DAY + MAX_AGE);
  });

  it("reads a listed page that expired as forgotten entries, and writes on after it", async () => {
    const space = await openSpace();
    const buffer = new ChannelBuffer(space, options());
    for (const text of ["one", "two", "three", "four"]) await buffer.append(CH, bufferInput(text, START));
    const first = await buffer.read(CH, { limit: 1 });
    const cursor = { epoch: first!.epoch, seq: 1, at: first!.entries[0]!.at };
    // What the pages' TTL does once every entry on them is past the age cap.
    clock.time = START + MAX_AGE + DAY + 1;
    await expirePages();
    const reader = new ChannelBuffer(await openSpace(), options());
    expect(await reader.read(CH, { after: cursor, limit: 10 })).toMatchObject({
      entries: [],
      dropped: 3,
      droppedThrough: { seq: 4 },
    });
    await reader.append(CH, bufferInput("five", clock.time));
    // "five" is written over the expired page of "four", which is still told of as forgotten.
    const after = await buffer.read(CH, { after: cursor, limit: 10 });
    expect(after?.entries.map((e) => e.text)).toEqual(["five"]);
    expect(after).toMatchObject({ dropped: 3, droppedThrough: { seq: 4 } });
  });

  for (const shared of [true, false])
    it(`reads pages written under a lower age cap, expired since, as forgotten entries and writes on (${shared ? "shared" : "alone"})`, async () => {
      const writer = new ChannelBuffer(await openSpace(), options(DAY, shared));
      for (const text of ["one", "two", "three", "four"]) await writer.append(CH, bufferInput(text, START));
      const epoch = await writer.epochOf(CH);
      const cursor = { epoch: epoch!, seq: 1, at: new Date(START).toISOString() };
      // The cap is raised to a week; two days later the pages' TTL (a day's cap and a day) has passed.
      clock.time = START + 2 * DAY + 3_600_000;
      await expirePages();
      const raised = new ChannelBuffer(await openSpace(), options(7 * DAY, shared));
      expect(await raised.read(CH, { after: cursor, limit: 10 })).toMatchObject({ entries: [], dropped: 3 });
      await raised.append(CH, bufferInput("five", clock.time));
      expect((await raised.read(CH, { after: cursor, limit: 10 }))?.entries.map((e) => e.text)).toEqual([
        "five",
      ]);
    });

  it("tells every listed page that expired from a replaced one by one more read of the head", async () => {
    const writer = new ChannelBuffer(await openSpace(), options());
    for (let n = 1; n <= 12; n++) await writer.append(CH, bufferInput(`m${n}`, START));
    const cursor = { epoch: (await writer.epochOf(CH))!, seq: 0, at: new Date(START).toISOString() };
    clock.time = START + MAX_AGE + DAY + 1;
    await expirePages();
    const space = await openSpace();
    let headReads = 0;
    const counted = spaceLike(space, {
      get: <T>(key: string) => {
        if (key === bufferHeadKey(CH)) headReads += 1;
        return space.get<T>(key);
      },
    });
    // Four pages listed, all gone: the head read for the read, and once more after the pages.
    const read = await new ChannelBuffer(counted, options()).read(CH, { after: cursor, limit: 10 });
    expect(read).toMatchObject({ entries: [], dropped: 12, droppedThrough: { seq: 12 } });
    expect(headReads).toBe(2);
  });

  it("counts a thread reader's forgotten entries across the channel, the same before and after their page expired", async () => {
    const buffer = new ChannelBuffer(await openSpace(), options());
    await buffer.append(CH, bufferInput("root", START));
    await buffer.append(CH, { ...bufferInput("in A", START), thread: "A" });
    await buffer.append(CH, { ...bufferInput("in B", START), thread: "B" });
    await buffer.append(CH, { ...bufferInput("in B again", START), thread: "B" });
    const cursor = { epoch: (await buffer.epochOf(CH))!, seq: 0, at: new Date(START).toISOString() };
    const readA = async () =>
      new ChannelBuffer(await openSpace(), options()).read(CH, { after: cursor, thread: "A", limit: 10 });
    clock.time = START + MAX_AGE + 3_600_000; // past the age cap, the pages still stored
    const stored = await readA();
    await expirePages();
    const expired = await readA();
    expect([stored?.dropped, expired?.dropped]).toEqual([4, 4]);
  });

  it("reads a page another process replaced after its head was read again from the new head, not as expired", async () => {
    const writer = new ChannelBuffer(await openSpace(), options());
    for (const text of ["one", "two", "three", "four"]) await writer.append(CH, bufferInput(text, START));
    const space = await openSpace();
    let raced = false;
    const racing = spaceLike(space, {
      get: async (key) => {
        if (key.startsWith("page:") && !raced) {
          raced = true; // the writer replaces the last page between this reader's head and page reads
          await writer.append(CH, bufferInput("five", START));
        }
        return space.get(key);
      },
    });
    const read = await new ChannelBuffer(racing, options()).read(CH, { limit: 10 });
    expect(raced).toBe(true);
    expect(read?.entries.map((e) => e.text)).toEqual(["one", "two", "three", "four", "five"]);
  });

  it("reads an expired page as expired though another process keeps appending to later pages meanwhile", async () => {
    // Pages 0 and 1 under a day's cap; the cap is raised to a week and page 2 written.
    const low = new ChannelBuffer(await openSpace(), options(DAY));
    for (const text of ["a", "b", "c", "d", "e", "f"]) await low.append(CH, bufferInput(text, START));
    const high = new ChannelBuffer(await openSpace(), options(7 * DAY));
    clock.time = START + DAY / 2;
    await high.append(CH, bufferInput("g", clock.time));
    clock.time = START + 2 * DAY + 3_600_000;
    for (const key of (await server.raw.keys("*")).filter((k) => /page:.*:[01]:/.test(k)))
      await server.raw.del(key);
    const space = await openSpace();
    let appends = 0;
    const busy = spaceLike(space, {
      get: async <T>(key: string) => {
        const value = await space.get<T>(key);
        // Another process appends (to page 2 or later) whenever this read finds page 0 gone.
        if (/^page:.*:0:/.test(key) && value === undefined)
          await high.append(CH, bufferInput(`x${appends++}`, clock.time));
        return value;
      },
    });
    // The read is of the head it read first: "g" (the expired entries are forgotten).
    const read = await new ChannelBuffer(busy, options(7 * DAY)).read(CH, { limit: 100 });
    expect(appends).toBeGreaterThan(0);
    expect(read?.entries.map((e) => e.text)).toEqual(["g"]);
  });
});
