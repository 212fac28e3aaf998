/** KeyedMutex: one task at a time per key, in call order, surviving failures. */
import { describe, expect, it } from "vitest";
import { KeyedMutex } from "../../src/store/key-mutex.js";

/** A promise with its resolver, to hold a task open until the test releases it. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

describe("KeyedMutex", () => {
  it("runs tasks on one key one at a time, in call order", async () => {
    const mutex = new KeyedMutex();
    const log: string[] = [];
    const first = gate();
    const a = mutex.run("k", async () => {
      log.push("a start");
      await first.promise;
      log.push("a end");
    });
    const b = mutex.run("k", async () => {
      log.push("b");
    });
    const c = mutex.run("k", async () => {
      log.push("c");
      return 42;
    });
    await Promise.resolve();
    expect(log).toEqual(["a start"]);
    first.open();
    await a;
    await b;
    expect(await c).toBe(42);
    expect(log).toEqual(["a start", "a end", "b", "c"]);
    expect(mutex.activeKeys).toBe(0);
  });

  it("lets different keys run concurrently", async () => {
    const mutex = new KeyedMutex();
    const held = gate();
    const log: string[] = [];
    const slow = mutex.run("one", async () => {
      await held.promise;
      log.push("one");
    });
    await mutex.run("two", async () => {
      log.push("two");
    });
    expect(log).toEqual(["two"]);
    held.open();
    await slow;
    expect(log).toEqual(["two", "one"]);
  });

  it("passes a failure to its caller and keeps serving the key", async () => {
    const mutex = new KeyedMutex();
    await expect(
      mutex.run("k", async () => {
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(await mutex.run("k", async () => "after")).toBe("after");
    expect(mutex.activeKeys).toBe(0);
  });
});
