/**
 * Stopping a turn (StopSwitch, whose AbortSignal is made only when asked for) and racing work
 * against it: a single promise (raceAbort) or a model's stream (readAbortable). Every result
 * passes until the abort, which ends the wait at once even while the work goes on; listeners are
 * not left behind, and a failure after the abort is no one's error.
 */
import { getEventListeners } from "node:events";
import { describe, expect, it, vi } from "vitest";
import { raceAbort, readAbortable, StopSwitch } from "../../src/core/abort.js";
import { deferred } from "../support/deferred.js";

/** An iterator whose results the test settles by hand, in order. */
function manualSource<T>() {
  const pending: Array<{ resolve(result: IteratorResult<T>): void; reject(error: unknown): void }> = [];
  const iterator: AsyncIterator<T> = {
    next: () => new Promise((resolve, reject) => pending.push({ resolve, reject })),
  };
  return { iterator, pending };
}

describe("raceAbort", () => {
  it("settles with the value and removes its abort listener", async () => {
    const controller = new AbortController();
    const work = deferred<string>();
    const raced = raceAbort(work.promise, controller.signal);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    work.resolve("done");
    expect(await raced).toEqual({ aborted: false, value: "done" });
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("ends at the abort while the work goes on, and swallows the work's later failure", async () => {
    const controller = new AbortController();
    const work = deferred<string>();
    const raced = raceAbort(work.promise, controller.signal);
    controller.abort();
    expect(await raced).toEqual({ aborted: true });
    work.reject(new Error("socket closed after the abort"));
    await new Promise((resolve) => setImmediate(resolve));
  });

  it("answers an already aborted signal at once, without a listener, and swallows the later failure", async () => {
    const controller = new AbortController();
    controller.abort();
    const work = deferred<string>();
    const listen = vi.spyOn(controller.signal, "addEventListener");
    expect(await raceAbort(work.promise, controller.signal)).toEqual({ aborted: true });
    expect(listen).not.toHaveBeenCalled();
    work.reject(new Error("failed after the abort"));
    await new Promise((resolve) => setImmediate(resolve));
  });

  it("passes a failure that came before any abort and removes its abort listener", async () => {
    const controller = new AbortController();
    const work = deferred<string>();
    const raced = raceAbort(work.promise, controller.signal);
    work.reject(new Error("lookup failed"));
    await expect(raced).rejects.toThrow("lookup failed");
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });
});

describe("StopSwitch", () => {
  it("hands out one AbortSignal that aborts with the switch", () => {
    const stop = new StopSwitch();
    expect(stop.aborted).toBe(false);
    const signal = stop.signal;
    expect(stop.signal).toBe(signal);
    stop.stop();
    expect(stop.aborted).toBe(true);
    expect(signal.aborted).toBe(true);
  });

  it("hands out an aborted signal when asked after the stop", () => {
    const stop = new StopSwitch();
    stop.stop();
    expect(stop.signal.aborted).toBe(true);
  });

  it("tells each listener once, not after its removal, nor when added after the stop", () => {
    const stop = new StopSwitch();
    const told: string[] = [];
    stop.onStop(() => told.push("a"));
    const remove = stop.onStop(() => told.push("b"));
    remove();
    stop.stop();
    stop.stop();
    stop.onStop(() => told.push("c"));
    expect(told).toEqual(["a"]);
  });
});

/** Let every pending promise callback run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("readAbortable", () => {
  it("hands every value on with one stop listener for the whole read, removed at its end", async () => {
    const stop = new StopSwitch();
    const { iterator, pending } = manualSource<string>();
    const listen = vi.spyOn(stop, "onStop");
    const seen: string[] = [];
    const read = readAbortable(iterator, stop, (value) => seen.push(value));
    for (const value of ["a", "b", "c"]) {
      pending.shift()!.resolve({ done: false, value });
      await settle();
    }
    pending.shift()!.resolve({ done: true, value: undefined });
    expect(await read).toEqual({ aborted: false, value: undefined });
    expect(seen).toEqual(["a", "b", "c"]);
    expect(listen).toHaveBeenCalledTimes(1);
    const unlisten = listen.mock.results[0]!.value as () => boolean;
    expect(unlisten()).toBe(false); // already removed when the read ended
  });

  it("ends as soon as the switch stops, hands on nothing after, reads no further and swallows a later failure", async () => {
    const stop = new StopSwitch();
    const { iterator, pending } = manualSource<string>();
    const seen: string[] = [];
    const read = readAbortable(iterator, stop, (value) => seen.push(value));
    pending.shift()!.resolve({ done: false, value: "a" });
    await settle();
    stop.stop();
    expect(await read).toEqual({ aborted: true });
    pending.shift()!.resolve({ done: false, value: "late" });
    await settle();
    expect(seen).toEqual(["a"]);
    expect(pending).toHaveLength(0);

    const again = new StopSwitch();
    const failing = manualSource<string>();
    const failed = readAbortable(failing.iterator, again, () => undefined);
    again.stop();
    expect(await failed).toEqual({ aborted: true });
    failing.pending.shift()!.reject(new Error("socket closed after the abort"));
    await settle();
  });

  it("does not read a source whose switch has already stopped", async () => {
    const stop = new StopSwitch();
    stop.stop();
    const { iterator, pending } = manualSource<string>();
    expect(await readAbortable(iterator, stop, () => undefined)).toEqual({ aborted: true });
    expect(pending).toHaveLength(0);
  });

  it("passes a failure that came before any stop, and stops listening", async () => {
    const stop = new StopSwitch();
    const { iterator, pending } = manualSource<string>();
    const listen = vi.spyOn(stop, "onStop");
    const read = readAbortable(iterator, stop, () => undefined);
    pending.shift()!.reject(new Error("model went away"));
    await expect(read).rejects.toThrow("model went away");
    const unlisten = listen.mock.results[0]!.value as () => boolean;
    expect(unlisten()).toBe(false);
  });
});
