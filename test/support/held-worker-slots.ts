/**
 * Every slot of a worker pool held by a worker that waits to be let go: a test can then show what
 * still runs (another pool's jobs) and what waits (this pool's), without timing anything.
 */
import { z } from "zod";
import { runWorkerJob, type WorkerPool } from "../../src/core/worker-job.js";
import { eventually } from "./eventually.js";

/** Counts itself started (gate slot 0), then holds its slot until gate slot 1 is set. */
const HOLDING = `
const { parentPort, workerData } = require("node:worker_threads");
const gate = new Int32Array(workerData.gate);
Atomics.add(gate, 0, 1);
while (Atomics.load(gate, 1) === 0) Atomics.wait(gate, 1, 0);
parentPort.postMessage({ ok: true });
`;

/** Hold every slot of `pool`; resolves once they all run. `release` lets them go and waits for them. */
export async function holdAllSlots(pool: WorkerPool): Promise<{ release: () => Promise<void> }> {
  const gate = new Int32Array(new SharedArrayBuffer(8));
  const holders = Array.from({ length: pool.size }, () =>
    runWorkerJob({
      pool,
      source: HOLDING,
      data: { gate: gate.buffer },
      result: z.object({}),
      name: "the holding worker",
      timeoutMs: 60_000,
      waitMs: 60_000,
      tooLong: "holding took too long",
      heapMb: 64,
    }),
  );
  await eventually(() => Atomics.load(gate, 0) === pool.size, "every slot held", 20_000);
  return {
    release: async () => {
      Atomics.store(gate, 1, 1);
      Atomics.notify(gate, 1);
      await Promise.all(holders);
    },
  };
}
