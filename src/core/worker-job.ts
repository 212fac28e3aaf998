/**
 * One job in a short-lived worker thread, for work on hostile input (a PDF someone sent, a page
 * the agent fetched) that could hold the event loop every chat runs on or grow without bound:
 * the worker runs `source` (plain JavaScript: worker threads run outside the TypeScript
 * toolchain) on `data`, posts one reply — `{ ok: true, …result }` or `{ ok: false, error }` — and
 * is ended whatever happens. It is given up after `timeoutMs`, and, when `memoryBudgetBytes` is
 * set, once the process's resident memory has grown past it (checked every 100 ms: a worker's heap
 * limit does not cover the buffers native code allocates for it).
 *
 * Jobs share a few slots, process-wide (WORKER_SLOTS): the rest wait their turn, first come first
 * served, and a job's time counts from when it was asked for, waiting included. Without them ten
 * PDFs in one message, or a page fetched in several threads, each got a worker, all CPUs and a
 * memory budget of their own — a megabyte of upload held a gigabyte for a minute.
 */
import os from "node:os";
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
  /** How long the job may take from when it is asked for, its wait for a slot included. */
  readonly timeoutMs: number;
  /** The message of a job given up for time ("reading it took too long"). */
  readonly tooLong: string;
  /** The worker's own heap limit. */
  readonly heapMb: number;
  /** Give up when the process grows by more than this while the job runs. */
  readonly memoryBudgetBytes?: number;
}

/** Worker jobs that run at once in this process: one per CPU, at most two. */
export const WORKER_SLOTS = Math.max(1, Math.min(2, os.availableParallelism()));

const MEMORY_CHECK_MS = 100;
const failureSchema = z.object({ ok: z.literal(false), error: z.string() });

/** The process's worker slots: a start waits in line until one is free. */
class WorkerSlots {
  private free: number;
  private readonly line: Array<() => void> = [];

  constructor(size: number) {
    this.free = size;
  }

  /** Run `start` in a slot now, or once one is free. */
  take(start: () => void): void {
    if (this.free > 0) {
      this.free--;
      start();
    } else this.line.push(start);
  }

  /** Leave the line (a job given up before its turn came). */
  leave(start: () => void): void {
    const at = this.line.indexOf(start);
    if (at >= 0) this.line.splice(at, 1);
  }

  /** Hand a slot back: to the next in line, if any. */
  release(): void {
    const next = this.line.shift();
    if (next) next();
    else this.free++;
  }
}

const slots = new WorkerSlots(WORKER_SLOTS);

/** Run `job` in a worker thread of its own, in a slot; resolves with its result, rejects with a clear reason. */
export function runWorkerJob<T>(job: WorkerJob<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    let ended = false;
    let inSlot = false;
    let worker: Worker | undefined;
    let memoryWatch: NodeJS.Timeout | undefined;
    const end = (outcome: () => void): void => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      clearInterval(memoryWatch);
      void worker?.terminate();
      if (inSlot) slots.release();
      else slots.leave(start);
      outcome();
    };
    const fail = (reason: string) => end(() => reject(new Error(reason)));
    const timer = setTimeout(() => fail(job.tooLong), job.timeoutMs);
    const start = (): void => {
      inSlot = true;
      try {
        worker = new Worker(job.source, {
          eval: true,
          workerData: job.data,
          resourceLimits: { maxOldGenerationSizeMb: job.heapMb },
        });
      } catch (error) {
        end(() => reject(error));
        return;
      }
      const baseline = process.memoryUsage.rss();
      const budget = job.memoryBudgetBytes;
      if (budget !== undefined)
        memoryWatch = setInterval(() => {
          if (process.memoryUsage.rss() - baseline > budget) fail(`${job.name} took too much memory`);
        }, MEMORY_CHECK_MS);
      worker.once("message", (message: unknown) => {
        const failed = failureSchema.safeParse(message);
        if (failed.success) return fail(failed.data.error);
        const ok = z.object({ ok: z.literal(true) }).safeParse(message);
        const result = job.result.safeParse(message);
        if (ok.success && result.success) end(() => resolve(result.data));
        else fail(`${job.name} answered unexpectedly`);
      });
      worker.once("error", (error) => end(() => reject(error)));
      worker.once("exit", (code) => fail(`${job.name} stopped (exit ${code})`));
    };
    slots.take(start);
  });
}
