/**
 * EventChannel: items come out in push order, a waiting consumer wakes on push, close drains then
 * ends, and the end is reported only once `beforeEnd` (run once) has resolved.
 */
import { describe, expect, it } from "vitest";
import { EventChannel } from "../../src/engine/event-channel.js";

async function drain<T>(channel: EventChannel<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of channel) out.push(item);
  return out;
}

describe("EventChannel", () => {
  it("hands out queued items in order, wakes a waiting consumer on push, and ends after close", async () => {
    const channel = new EventChannel<number>();
    channel.push(1);
    channel.push(2);
    const drained = drain(channel);
    await Promise.resolve();
    channel.push(3);
    await new Promise((resolve) => setImmediate(resolve));
    channel.push(4);
    channel.close();
    channel.push(5);
    expect(await drained).toEqual([1, 2, 3, 4]);
  });

  it("ends a consumer that is waiting when the channel closes", async () => {
    const channel = new EventChannel<string>();
    const iterator = channel[Symbol.asyncIterator]();
    const next = iterator.next();
    channel.close();
    expect(await next).toEqual({ value: undefined, done: true });
    expect(await iterator.next()).toEqual({ value: undefined, done: true });
  });

  it("drains what was queued before close", async () => {
    const channel = new EventChannel<string>();
    channel.push("a");
    channel.push("b");
    channel.close();
    expect(await drain(channel)).toEqual(["a", "b"]);
  });

  it("runs beforeEnd once and reports the end only when it has resolved, to a consumer waiting at close and asking again", async () => {
    let release: () => void = () => undefined;
    const ended = new Promise<void>((resolve) => {
      release = resolve;
    });
    const calls: string[] = [];
    const channel = new EventChannel<string>(() => {
      calls.push("beforeEnd");
      return ended;
    });
    const iterator = channel[Symbol.asyncIterator]();
    let reported = false;
    const waiting = iterator.next().then((result) => {
      reported = true;
      return result;
    });
    channel.close();
    await new Promise((resolve) => setImmediate(resolve));
    expect(reported).toBe(false);
    release();
    expect(await waiting).toEqual({ value: undefined, done: true });
    expect(await iterator.next()).toEqual({ value: undefined, done: true });
    expect(calls).toEqual(["beforeEnd"]);
  });

  it("hands a failing beforeEnd to the consumer", async () => {
    const channel = new EventChannel<string>(() => Promise.reject(new Error("wind-down failed")));
    const iterator = channel[Symbol.asyncIterator]();
    const waiting = iterator.next();
    channel.close();
    await expect(waiting).rejects.toThrow("wind-down failed");
  });
});
