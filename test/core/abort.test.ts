/**
 * Reading a model's stream against the turn's abort signal: every result passes until the abort,
 * which ends the read at once even while the source is still working; one listener serves the
 * whole read, and a failure after the abort is no one's error.
 */
import { getEventListeners } from "node:events";
import { describe, expect, it, vi } from "vitest";
import { abortableReader } from "../../src/core/abort.js";

/** An iterator whose results the test settles by hand, in order. */
function manualSource<T>() {
  const pending: Array<{ resolve(result: IteratorResult<T>): void; reject(error: unknown): void }> = [];
  const iterator: AsyncIterator<T> = {
    next: () => new Promise((resolve, reject) => pending.push({ resolve, reject })),
  };
  return { iterator, pending };
}

describe("abortableReader", () => {
  it("passes every result through with one abort listener for the whole read", async () => {
    const controller = new AbortController();
    const { iterator, pending } = manualSource<string>();
    const listen = vi.spyOn(controller.signal, "addEventListener");
    const reader = abortableReader(iterator, controller.signal);
    for (const value of ["a", "b", "c"]) {
      const next = reader.next();
      expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
      pending.shift()!.resolve({ done: false, value });
      expect(await next).toEqual({ aborted: false, value: { done: false, value } });
    }
    const last = reader.next();
    pending.shift()!.resolve({ done: true, value: undefined });
    expect(await last).toEqual({ aborted: false, value: { done: true, value: undefined } });
    expect(listen).toHaveBeenCalledTimes(1);
    reader.close();
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("ends a waiting read as soon as the signal aborts, and swallows the source's later failure", async () => {
    const controller = new AbortController();
    const { iterator, pending } = manualSource<string>();
    const reader = abortableReader(iterator, controller.signal);
    const next = reader.next();
    controller.abort();
    expect(await next).toEqual({ aborted: true });
    pending.shift()!.reject(new Error("socket closed after the abort"));
    expect(await reader.next()).toEqual({ aborted: true });
    pending.shift()!.reject(new Error("and again"));
    await new Promise((resolve) => setImmediate(resolve));
    reader.close();
  });

  it("passes a failure that came before any abort", async () => {
    const controller = new AbortController();
    const { iterator, pending } = manualSource<string>();
    const reader = abortableReader(iterator, controller.signal);
    const next = reader.next();
    pending.shift()!.reject(new Error("model went away"));
    await expect(next).rejects.toThrow("model went away");
    reader.close();
  });
});
