/** GroupQueue: what is pushed together goes out together; what arrives meanwhile waits for the next batch. */
import { describe, expect, it } from "vitest";
import { GroupQueue } from "../../src/store/backends/group-queue.js";

interface Item {
  readonly n: number;
  fail(error: unknown): void;
}

function item(n: number, failures: Array<[number, unknown]>): Item {
  return { n, fail: (error) => failures.push([n, error]) };
}

describe("GroupQueue", () => {
  it("batches items pushed in one turn, and items pushed while a batch runs into the next one", async () => {
    const batches: number[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const queue = new GroupQueue<Item>(async (batch) => {
      batches.push(batch.map((i) => i.n));
      if (batches.length === 1) await gate;
    });
    const failures: Array<[number, unknown]> = [];
    for (const n of [1, 2, 3]) queue.push(item(n, failures));
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([[1, 2, 3]]);
    for (const n of [4, 5]) queue.push(item(n, failures));
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([[1, 2, 3]]);
    release();
    await queue.idle();
    expect(batches).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
    expect(failures).toEqual([]);
  });

  it("fails every item of a batch whose execution throws, and carries on with the next batch", async () => {
    const boom = new Error("disk full");
    const seen: number[][] = [];
    const queue = new GroupQueue<Item>(async (batch) => {
      seen.push(batch.map((i) => i.n));
      if (batch.some((i) => i.n === 2)) throw boom;
    });
    const failures: Array<[number, unknown]> = [];
    queue.push(item(1, failures));
    queue.push(item(2, failures));
    await queue.idle();
    queue.push(item(3, failures));
    await queue.idle();
    expect(seen).toEqual([[1, 2], [3]]);
    expect(failures).toEqual([
      [1, boom],
      [2, boom],
    ]);
  });
});
