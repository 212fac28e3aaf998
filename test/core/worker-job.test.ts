/**
 * Worker jobs of one kind share a pool of a few slots, process-wide: however many are asked for at
 * once, at most WORKER_SLOTS run; the others wait in line, and one still in line when its wait runs
 * out is given up without ever starting, saying the pool was busy. A job's time limit counts from
 * when it starts, not from when it was asked for; and a pool's held slots never hold up another's.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { runWorkerJob, WORKER_SLOTS, WorkerPool } from "../../src/core/worker-job.js";
import { holdAllSlots } from "../support/held-worker-slots.js";

/**
 * A worker that counts itself in (slot 0: running now, slot 1: the most seen at once, slot 2: how
 * many ever started), waits until `together` run at once (or half a second), then counts itself out.
 */
const COUNTING = `
const { parentPort, workerData } = require("node:worker_threads");
const counts = new Int32Array(workerData.counts);
const now = Atomics.add(counts, 0, 1) + 1;
Atomics.add(counts, 2, 1);
for (let seen = Atomics.load(counts, 1); now > seen; seen = Atomics.load(counts, 1))
  Atomics.compareExchange(counts, 1, seen, now);
Atomics.notify(counts, 0);
const deadline = Date.now() + 500;
while (Atomics.load(counts, 0) < workerData.together && Date.now() < deadline)
  Atomics.wait(counts, 0, Atomics.load(counts, 0), 50);
Atomics.sub(counts, 0, 1);
parentPort.postMessage({ ok: true });
`;

function job(
  pool: WorkerPool,
  counts: SharedArrayBuffer,
  together: number,
  limits: { timeoutMs?: number; waitMs?: number } = {},
) {
  return runWorkerJob({
    pool,
    source: COUNTING,
    data: { counts, together },
    result: z.object({}),
    name: "the counting worker",
    timeoutMs: limits.timeoutMs ?? 20_000,
    waitMs: limits.waitMs ?? 20_000,
    tooLong: "counting took too long",
    heapMb: 64,
  });
}

describe("worker jobs", () => {
  it("run at most WORKER_SLOTS at once, the rest in line, and all finish", async () => {
    const counts = new SharedArrayBuffer(12);
    const asked = WORKER_SLOTS + 3;
    const pool = new WorkerPool();
    await Promise.all(Array.from({ length: asked }, () => job(pool, counts, WORKER_SLOTS)));
    const [running, most, started] = Array.from(new Int32Array(counts));
    expect({ running, most, started }).toEqual({ running: 0, most: WORKER_SLOTS, started: asked });
  });

  it("give up a job still in line when its wait runs out, without starting it, saying the pool was busy", async () => {
    const pool = new WorkerPool();
    const held = await holdAllSlots(pool);
    const counts = new SharedArrayBuffer(12);
    await expect(job(pool, counts, 1, { waitMs: 200 })).rejects.toThrow(
      "the counting worker was busy: no slot came free within 200 ms",
    );
    await held.release();
    expect(new Int32Array(counts)[2]).toBe(0);
  });

  it("count a job's time limit from when it starts, not from when it was asked for", async () => {
    const pool = new WorkerPool();
    const held = await holdAllSlots(pool);
    const counts = new SharedArrayBuffer(12);
    // Asked for with 300 ms to run; it waits longer than that in line, then runs and finishes.
    const late = job(pool, counts, 1, { timeoutMs: 300 });
    await new Promise((resolve) => setTimeout(resolve, 600));
    await held.release();
    await expect(late).resolves.toEqual({});
    expect(new Int32Array(counts)[2]).toBe(1);
  });

  it("run a job of one pool while every slot of another is held", async () => {
    const pdfs = new WorkerPool();
    const held = await holdAllSlots(pdfs);
    const counts = new SharedArrayBuffer(12);
    await expect(job(new WorkerPool(), counts, 1, { waitMs: 5_000 })).resolves.toEqual({});
    await held.release();
  });
});
