/**
 * A shared channel buffer whose writes keep losing to another process's (on a real redis-server)
 * pauses between its attempts on its clock: a doubling backoff, each pause between half and all
 * of it at random; none when nothing got in its way, and none after the last attempt.
 */
import os from "node:os";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Clock } from "../../src/core/clock.js";
import { createStore } from "../../src/store/create-store.js";
import { deleteIfHolds, type KeyValueSpace, type Store } from "../../src/store/store.js";
import type { BufferEntryInput } from "../../src/subscriptions/buffer-entry.js";
import { ChannelBuffer } from "../../src/subscriptions/channel-buffer.js";
import { type RedisServer, startRedisServer } from "../support/redis-server.js";

const CH = "slack:T1:CBUSY";
const OPTIONS = { maxEntries: 1_000, maxAgeMs: 86_400_000, pageSize: 3, shared: true };

/** Real time; each timer's pause is recorded and the timer fires at once. */
function pauseRecordingClock(): Clock & { pauses: number[] } {
  const pauses: number[] = [];
  return {
    pauses,
    now: () => Date.now(),
    setTimer(callback, ms) {
      pauses.push(ms);
      queueMicrotask(callback);
    },
    clearTimer: () => undefined,
  };
}

let counter = 0;
function input(text: string): BufferEntryInput {
  counter += 1;
  return {
    id: `${1_800_000_000 + counter}.000100`,
    author: { id: "UBOB", name: "Bob", isBot: false },
    text,
    at: new Date().toISOString(),
  };
}

describe("a shared channel buffer's retries", () => {
  let redis: RedisServer;
  let stores: Store[];

  beforeEach(async () => {
    redis = await startRedisServer();
    stores = [];
  }, 20_000);

  afterEach(async () => {
    vi.restoreAllMocks();
    for (const store of stores) await store.close();
    await redis.stop();
  });

  async function openSpace(): Promise<KeyValueSpace> {
    const store = await createStore({ url: redis.url, dataDir: os.tmpdir() });
    stores.push(store);
    return store.space("buffers");
  }

  /** A space whose head commits each first let another process append to the channel, `times` times. */
  function losing(space: KeyValueSpace, other: ChannelBuffer, times: number): KeyValueSpace {
    let left = times;
    return {
      get: (key) => space.get(key),
      set: (key, value, ttl) => space.set(key, value, ttl),
      delete: (key) => space.delete(key),
      setIfAbsent: (key, value, ttl) => space.setIfAbsent(key, value, ttl),
      replaceIf: async (key, expected, value, ttl) => {
        if (left > 0) {
          left -= 1;
          await other.append(CH, input("by another process"));
        }
        return space.replaceIf(key, expected, value, ttl);
      },
      deleteIf: (key, expected) => deleteIfHolds(space, key, expected),
    };
  }

  it("pauses a doubling backoff between attempts, from half of it to all of it at random", async () => {
    const other = new ChannelBuffer(await openSpace(), OPTIONS);
    await other.append(CH, input("first"));
    const clock = pauseRecordingClock();
    const buffer = new ChannelBuffer(losing(await openSpace(), other, 3), { ...OPTIONS, clock });
    vi.spyOn(Math, "random").mockReturnValue(0);
    await buffer.append(CH, input("mine"));
    expect(clock.pauses).toEqual([2.5, 5, 10]);
    const all = await (await openSpace()).get<{ data: { lastSeq: number } }>(`head:${CH}`);
    expect(all?.data.lastSeq).toBe(5);

    clock.pauses.length = 0;
    const again = new ChannelBuffer(losing(await openSpace(), other, 2), { ...OPTIONS, clock });
    vi.spyOn(Math, "random").mockReturnValue(0.999);
    await again.append(CH, input("mine again"));
    expect(clock.pauses.map((ms) => Math.round(ms))).toEqual([5, 10]);
  });

  it("does not pause when nothing got in its way", async () => {
    const clock = pauseRecordingClock();
    const buffer = new ChannelBuffer(await openSpace(), { ...OPTIONS, clock });
    await buffer.append(CH, input("one"));
    await buffer.append(CH, input("two"));
    expect(await buffer.read(CH, { limit: 10 })).toMatchObject({ entries: [{ seq: 1 }, { seq: 2 }] });
    expect(clock.pauses).toEqual([]);
  });

  it("gives up after its last attempt without a pause after it, the pauses never over the longest", async () => {
    const other = new ChannelBuffer(await openSpace(), OPTIONS);
    const clock = pauseRecordingClock();
    const buffer = new ChannelBuffer(losing(await openSpace(), other, 100), { ...OPTIONS, clock });
    await other.append(CH, input("first"));
    vi.spyOn(Math, "random").mockReturnValue(0.999);
    await expect(buffer.append(CH, input("never"))).rejects.toThrow("changed its buffer 16 times");
    expect(clock.pauses).toHaveLength(15);
    expect(Math.max(...clock.pauses)).toBeLessThanOrEqual(200);
    expect(Math.round(clock.pauses.at(-1)!)).toBe(200);
  });
});
