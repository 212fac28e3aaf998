/**
 * Worker jobs share a few slots, process-wide: however many are asked for at once, at most
 * WORKER_SLOTS run; the others wait in line, and one whose time runs out while it waits is given
 * up without ever starting.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { runWorkerJob, WORKER_SLOTS } from "../../src/core/worker-job.js";

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

function job(counts: SharedArrayBuffer, together: number, timeoutMs = 20_000) {
  return runWorkerJob({
    source: COUNTING,
    data: { counts, together },
    result: z.object({}),
    name: "the counting worker",
    timeoutMs,
    tooLong: "counting took too long",
    heapMb: 64,
  });
}

describe("worker jobs", () => {
  it("run at most WORKER_SLOTS at once, the rest in line, and all finish", async () => {
    const counts = new SharedArrayBuffer(12);
    const asked = WORKER_SLOTS + 3;
    await Promise.all(Array.from({ length: asked }, () => job(counts, WORKER_SLOTS)));
    const [running, most, started] = Array.from(new Int32Array(counts));
    expect({ running, most, started }).toEqual({ running: 0, most: WORKER_SLOTS, started: asked });
  });

  it("give up a job whose time runs out in line, without starting it", async () => {
    const counts = new SharedArrayBuffer(12);
    // The slots are held by jobs waiting for one more than can ever run together (half a second each).
    const holders = Array.from({ length: WORKER_SLOTS }, () => job(counts, WORKER_SLOTS + 1));
    const late = job(counts, 1, 200);
    await expect(late).rejects.toThrow("counting took too long");
    await Promise.all(holders);
    expect(new Int32Array(counts)[2]).toBe(WORKER_SLOTS);
  });
});
