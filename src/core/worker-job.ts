/**
 * One job in a short-lived worker thread, for work on hostile input (a PDF someone sent, a page
 * the agent fetched) that could hold the event loop every chat runs on or grow without bound:
 * the worker runs `source` (plain JavaScript: worker threads run outside the TypeScript
 * toolchain) on `data`, posts one reply — `{ ok: true, …result }` or `{ ok: false, error }` — and
 * is ended whatever happens. It is given up after `timeoutMs`, and, when `memoryBudgetBytes` is
 * set, once the process's resident memory has grown past it (checked every 100 ms: a worker's heap
 * limit does not cover the buffers native code allocates for it).
 *
 * Jobs of one kind share a pool of a few slots, process-wide (WORKER_SLOTS each): the rest wait
 * their turn, first come first served. Without them ten PDFs in one message, or a page fetched in
 * several threads, each got a worker, all CPUs and a memory budget of their own — a megabyte of
 * upload held a gigabyte for a minute. Each kind has its own pool (the PDF reader's, the page
 * converter's), so two slow PDFs never hold up every web_fetch in the process. A job's time limit
 * counts from when it starts in a slot, so a job never fails for time it spent waiting; the wait
 * itself has a limit of its own, and a job still in line then is given up, unstarted, saying the
 * pool was busy.
 */
import os from "node:os";
import { Worker } from "node:worker_threads";
import { z } from "zod";
import { formatDuration } from "./duration-text.js";

/** What one worker job runs and how long and large it may get. */
export interface WorkerJob<T> {
  /** The pool of this kind of job, whose slots it waits for. */
  readonly pool: WorkerPool;
  /** The worker's body: reads `workerData`, posts one reply. */
  readonly source: string;
  readonly data: unknown;
  /** The reply's result fields (besides `ok: true`). */
  readonly result: z.ZodType<T>;
  /** Names the worker in errors ("the PDF reader"). */
  readonly name: string;
  /** How long the job may run, from when it starts in a slot. */
  readonly timeoutMs: number;
  /** How long the job may wait in line for a slot; then it is given up, unstarted. */
  readonly waitMs: number;
  /** The message of a job given up for time ("reading it took too long"). */
  readonly tooLong: string;
  /** The worker's own heap limit. */
  readonly heapMb: number;
  /** Give up when the process grows by more than this while the job runs. */
  readonly memoryBudgetBytes?: number;
}

/** Worker jobs of one kind that run at once in this process: one per CPU, at most two. */
export const WORKER_SLOTS = Math.max(1, Math.min(2, os.availableParallelism()));

const MEMORY_CHECK_MS = 100;
const failureSchema = z.object({ ok: z.literal(false), error: z.string() });

/** The slots of one kind of worker job: a start waits in line until one is free. */
export class WorkerPool {
  private free: number;
  private readonly line: Array<() => void> = [];

  constructor(readonly size: number = WORKER_SLOTS) {
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

/** Run `job` in a worker thread of its own, in a slot; resolves with its result, rejects with a clear reason. */
export function runWorkerJob<T>(job: WorkerJob<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    let ended = false;
    let inSlot = false;
    let worker: Worker | undefined;
    let memoryWatch: NodeJS.Timeout | undefined;
    const { pool } = job;
    const end = (outcome: () => void): void => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      clearInterval(memoryWatch);
      void worker?.terminate();
      if (inSlot) pool.release();
      else pool.leave(start);
      outcome();
    };
    const fail = (reason: string) => end(() => reject(new Error(reason)));
    let timer = setTimeout(
      () => fail(`${job.name} was busy: no slot came free within ${formatDuration(job.waitMs)}`),
      job.waitMs,
    );
    const start = (): void => {
      inSlot = true;
      clearTimeout(timer);
      timer = setTimeout(() => fail(job.tooLong), job.timeoutMs);
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
    pool.take(start);
  });
}
