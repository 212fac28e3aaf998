/**
 * EventChannel: items come out in push order, a waiting consumer wakes on push, and close drains
 * then ends.
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
});
