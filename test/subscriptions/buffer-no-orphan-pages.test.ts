/**
 * A channel buffer shared by several processes on a real redis-server leaves no page behind that
 * no head lists (such a page would keep channel text past unsubscribe until it expires): not when
 * the head write fails with a store error, and not when the buffer is dropped while another
 * process commits a write. A drop leaves no head behind either, and a write another process
 * commits after the drop deleted the head is kept.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { spaceLike } from "../support/space-like.js";
import { ChannelBuffer } from "../../src/subscriptions/channel-buffer.js";
import { BufferServer, bufferInput } from "./support-shared-buffer.js";

const CH = "slack:T1:CLEAK";
const OPTIONS = { maxEntries: 1_000, maxAgeMs: 86_400_000, pageSize: 3, shared: true };

describe("a shared channel buffer's pages", () => {
  let server: BufferServer;
  let raw: BufferServer["raw"];

  beforeEach(async () => {
    server = await BufferServer.start();
    raw = server.raw;
  }, 20_000);

  afterEach(() => server.stop());

  const openSpace = () => server.openSpace();

  /** Page keys stored in Redis, and the page keys the stored head lists. */
  async function pages(): Promise<{ stored: string[]; listed: string[] }> {
    const keys = await raw.keys("*");
    const stored = keys
      .filter((k) => k.includes(`page:${CH}:`))
      .map((k) => k.slice(k.indexOf("page:")))
      .sort();
    const read = await (await openSpace()).get<{ data: { pages: { index: number; rev?: string }[] } }>(
      `head:${CH}`,
    );
    const listed = (read?.data.pages ?? []).map((p) => `page:${CH}:${p.index}:${p.rev}`).sort();
    return { stored, listed };
  }

  const texts = async (buffer: ChannelBuffer) =>
    (await buffer.read(CH, { limit: 100 }))?.entries.map((e) => e.text);

  it("deletes a write's pages when its head write fails with a store error", async () => {
    const space = await openSpace();
    let fail: "before" | "after" | undefined;
    const flaky = spaceLike(space, {
      replaceIf: async (key, expected, value, ttl) => {
        if (fail === "before") throw new Error("store timeout");
        const wrote = await space.replaceIf(key, expected, value, ttl);
        if (fail === "after") throw new Error("store timeout");
        return wrote;
      },
    });
    const buffer = new ChannelBuffer(flaky, OPTIONS);
    await buffer.append(CH, bufferInput("one"));
    fail = "before";
    await expect(buffer.append(CH, bufferInput("lost"))).rejects.toThrow("store timeout");
    fail = undefined;
    await buffer.append(CH, bufferInput("two"));
    await buffer.append(CH, bufferInput("three"));
    await buffer.append(CH, bufferInput("four"));
    const after = await pages();
    expect(after.stored).toEqual(after.listed);
    // A head write that landed before the store failed counts as written: nothing is deleted under it.
    fail = "after";
    await buffer.append(CH, bufferInput("five"));
    fail = undefined;
    expect(await texts(new ChannelBuffer(await openSpace(), OPTIONS))).toEqual([
      "one",
      "two",
      "three",
      "four",
      "five",
    ]);
    const last = await pages();
    expect(last.stored).toEqual(last.listed);
  });

  it("drops the pages of a write another process commits while the drop runs", async () => {
    const space = await openSpace();
    let race: (() => Promise<unknown>) | undefined;
    const racing = spaceLike(space, {
      get: async (key) => {
        const value = await space.get(key);
        const run = key.startsWith("head:") ? race : undefined;
        race = undefined;
        await run?.();
        return value as never;
      },
    });
    const a = new ChannelBuffer(racing, OPTIONS);
    const b = new ChannelBuffer(await openSpace(), OPTIONS);
    await a.append(CH, bufferInput("one"));
    await a.append(CH, bufferInput("two"));
    race = () => b.append(CH, bufferInput("three, by another process"));
    await a.drop(CH);
    expect((await pages()).stored).toEqual([]);
    expect(await texts(b)).toBeUndefined();
  });

  it("deletes the head when a drop empties the buffer", async () => {
    const space = await openSpace();
    const buffer = new ChannelBuffer(space, OPTIONS);
    await buffer.append(CH, bufferInput("one"));
    const epoch = await buffer.epochOf(CH);
    await buffer.drop(CH);
    expect(await raw.keys("*")).toEqual([]);
    expect(await buffer.read(CH, { limit: 10 })).toBeUndefined();
    await buffer.append(CH, bufferInput("two"));
    expect(await buffer.epochOf(CH)).not.toBe(epoch);
    expect(await texts(new ChannelBuffer(await openSpace(), OPTIONS))).toEqual(["two"]);
  });

  it("keeps a write another process commits after the drop deleted the head", async () => {
    const space = await openSpace();
    let race: (() => Promise<unknown>) | undefined;
    /** Runs `race` once, right after the drop's first conditional write to the head lands. */
    const landed = async <T>(key: string, wrote: T): Promise<T> => {
      const run = key.startsWith("head:") && wrote ? race : undefined;
      if (run) race = undefined;
      await run?.();
      return wrote;
    };
    const racing = spaceLike(space, {
      replaceIf: async (key, expected, value, ttl) =>
        landed(key, await space.replaceIf(key, expected, value, ttl)),
      deleteIf: async (key, expected) => landed(key, await space.deleteIf(key, expected)),
    });
    const a = new ChannelBuffer(space, OPTIONS);
    const b = new ChannelBuffer(await openSpace(), OPTIONS);
    await a.append(CH, bufferInput("one"));
    const epoch = await a.epochOf(CH);
    race = () => b.append(CH, bufferInput("two, by another process"));
    await new ChannelBuffer(racing, OPTIONS).drop(CH);
    expect(race).toBeUndefined();
    expect(await texts(new ChannelBuffer(await openSpace(), OPTIONS))).toEqual(["two, by another process"]);
    expect(await b.epochOf(CH)).not.toBe(epoch);
    const after = await pages();
    expect(after.stored).toEqual(after.listed);
    expect(after.stored).toHaveLength(1);
  });
});
