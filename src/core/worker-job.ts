/**
 * One job in a short-lived worker thread, for work on hostile input (a PDF someone sent, a page
 * the agent fetched) that could hold the event loop every chat runs on or grow without bound:
 * the worker runs `source` (plain JavaScript: worker threads run outside the TypeScript
 * toolchain) on `data`, posts one reply — `{ ok: true, …result }` or `{ ok: false, error }` — and
 * is ended whatever happens. It is given up after `timeoutMs`, and, when `memoryBudgetBytes` is
 * set, once the process's resident memory has grown past it (checked every 100 ms: a worker's heap
 * limit does not cover the buffers native code allocates for it).
 */
import { Worker } from "node:worker_threads";
import { z } from "zod";

/** What one worker job runs and how long and large it may get. */
export interface WorkerJob<T> {
  /** The worker's body: reads `workerData`, posts one reply. */
  readonly source: string;
  readonly data: unknown;
  /** The reply's result fields (besides `ok: true`). */
  readonly result: z.ZodType<T>;
  /** Names the worker in errors ("the PDF reader"). */
  readonly name: string;
  readonly timeoutMs: number;
  /** The message of a job given up for time ("reading it took too long"). */
  readonly tooLong: string;
  /** The worker's own heap limit. */
  readonly heapMb: number;
  /** Give up when the process grows by more than this while the job runs. */
  readonly memoryBudgetBytes?: number;
}

const MEMORY_CHECK_MS = 100;
const failureSchema = z.object({ ok: z.literal(false), error: z.string() });

/** Run `job` in its own worker thread; resolves with its result, rejects with a clear reason. */
export function runWorkerJob<T>(job: WorkerJob<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(job.source, {
      eval: true,
      workerData: job.data,
      resourceLimits: { maxOldGenerationSizeMb: job.heapMb },
    });
    const baseline = process.memoryUsage.rss();
    const unwatch = (): void => {
      clearTimeout(timer);
      clearInterval(memoryWatch);
    };
    const settle = (): void => {
      unwatch();
      void worker.terminate();
    };
    const giveUp = (reason: string): void => {
      settle();
      reject(new Error(reason));
    };
    const timer = setTimeout(() => giveUp(job.tooLong), job.timeoutMs);
    const budget = job.memoryBudgetBytes;
    const memoryWatch =
      budget === undefined
        ? undefined
        : setInterval(() => {
            if (process.memoryUsage.rss() - baseline > budget) giveUp(`${job.name} took too much memory`);
          }, MEMORY_CHECK_MS);
    worker.once("message", (message: unknown) => {
      settle();
      const failed = failureSchema.safeParse(message);
      if (failed.success) return reject(new Error(failed.data.error));
      const ok = z.object({ ok: z.literal(true) }).safeParse(message);
      const result = job.result.safeParse(message);
      if (ok.success && result.success) resolve(result.data);
      else reject(new Error(`${job.name} answered unexpectedly`));
    });
    worker.once("error", (error) => {
      settle();
      reject(error);
    });
    worker.once("exit", (code) => {
      unwatch();
      if (code !== 0) reject(new Error(`${job.name} stopped (exit ${code})`));
    });
  });
}
