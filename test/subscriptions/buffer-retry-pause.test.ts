/**
 * A shared channel buffer whose writes keep losing to another process's (on a real redis-server)
 * pauses between its attempts on its clock: a doubling backoff, each pause between half and all
 * of it at random; none when nothing got in its way, and none after the last attempt.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Clock } from "../../src/core/clock.js";
import type { KeyValueSpace } from "../../src/store/store.js";
import { ChannelBuffer } from "../../src/subscriptions/channel-buffer.js";
import { spaceLike } from "../support/space-like.js";
import { BufferServer, bufferInput } from "./support-shared-buffer.js";

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

describe("a shared channel buffer's retries", () => {
  let server: BufferServer;

  beforeEach(async () => {
    server = await BufferServer.start();
  }, 20_000);

  afterEach(async () => {
    vi.restoreAllMocks();
    await server.stop();
  });

  const openSpace = () => server.openSpace();

  /** A space whose head commits each first let another process append to the channel, `times` times. */
  function losing(space: KeyValueSpace, other: ChannelBuffer, times: number): KeyValueSpace {
    let left = times;
    return spaceLike(space, {
      replaceIf: async (key, expected, value, ttl) => {
        if (left > 0) {
          left -= 1;
          await other.append(CH, bufferInput("by another process"));
        }
        return space.replaceIf(key, expected, value, ttl);
      },
    });
  }

  it("pauses a doubling backoff between attempts, from half of it to all of it at random", async () => {
    const other = new ChannelBuffer(await openSpace(), OPTIONS);
    await other.append(CH, bufferInput("first"));
    const clock = pauseRecordingClock();
    const buffer = new ChannelBuffer(losing(await openSpace(), other, 3), { ...OPTIONS, clock });
    vi.spyOn(Math, "random").mockReturnValue(0);
    await buffer.append(CH, bufferInput("mine"));
    expect(clock.pauses).toEqual([2.5, 5, 10]);
    const all = await (await openSpace()).get<{ data: { lastSeq: number } }>(`head:${CH}`);
    expect(all?.data.lastSeq).toBe(5);

    clock.pauses.length = 0;
    const again = new ChannelBuffer(losing(await openSpace(), other, 2), { ...OPTIONS, clock });
    vi.spyOn(Math, "random").mockReturnValue(0.999);
    await again.append(CH, bufferInput("mine again"));
    expect(clock.pauses.map((ms) => Math.round(ms))).toEqual([5, 10]);
  });

  it("does not pause when nothing got in its way", async () => {
    const clock = pauseRecordingClock();
    const buffer = new ChannelBuffer(await openSpace(), { ...OPTIONS, clock });
    await buffer.append(CH, bufferInput("one"));
    await buffer.append(CH, bufferInput("two"));
    expect(await buffer.read(CH, { limit: 10 })).toMatchObject({ entries: [{ seq: 1 }, { seq: 2 }] });
    expect(clock.pauses).toEqual([]);
  });

  it("gives up after its last attempt without a pause after it, the pauses never over the longest", async () => {
    const other = new ChannelBuffer(await openSpace(), OPTIONS);
    const clock = pauseRecordingClock();
    const buffer = new ChannelBuffer(losing(await openSpace(), other, 100), { ...OPTIONS, clock });
    await other.append(CH, bufferInput("first"));
    vi.spyOn(Math, "random").mockReturnValue(0.999);
    await expect(buffer.append(CH, bufferInput("never"))).rejects.toThrow("changed its buffer 16 times");
    expect(clock.pauses).toHaveLength(15);
    expect(Math.max(...clock.pauses)).toBeLessThanOrEqual(200);
    expect(Math.round(clock.pauses.at(-1)!)).toBe(200);
  });
});
