/**
 * Lane jobs: the queues under the hand-over lanes (hand-over-lanes.ts), kept apart from what the
 * lanes decide (which jobs a stop or a stopping channel cancels, who is told of them) so that
 * each can be read on its own. A lane is one key (one sender in one conversation): its jobs run
 * one at a time, in the order they were queued, while other lanes' jobs run beside them. A lane
 * holds at most `maxWaiting` jobs, the running one included, so nobody piles up unbounded work. A
 * job's failure is logged and its lane goes on. Each job has a signal of its own (LaneSignal): a
 * cancel (`abort`) reaches a job still waiting, which then never runs, and the running one, which
 * then hands nothing over — unless it has started handing over already, which no cancel undoes.
 * A lane is forgotten once it holds no job.
 */
import type { Logger } from "pino";
import type { Telling } from "./lane-drop-notes.js";
import type { Positioned } from "./lane-stop-marks.js";

/**
 * What a job sees of its lane's cancelling: once its message is ready (files read), it asks
 * `handingOver()`. False: the lane was cancelled meanwhile (the sender's stop, the channel
 * stopping), so it hands nothing over. True: it hands over now, and no later cancel reaches it —
 * it is not counted as dropped, nor its sender told so. Not an AbortSignal: jobs only ask this
 * once, and a message is not worth an AbortController.
 */
export interface LaneSignal {
  handingOver(): boolean;
}

/** A lane's job (see LaneSignal). */
export type LaneJob = (signal: LaneSignal) => Promise<void>;

/**
 * What `add` (HandOverLanes enqueue) knows of a job besides its work: how its sender is told it was dropped (Telling;
 * nobody is told without `tell`), where its message stands (Positioned), and whether the sender's
 * stop spares it (`keptByStop`; `drain` never does).
 */
export type JobOptions = Partial<Telling> & Positioned & { readonly keptByStop?: boolean | undefined };

/**
 * A job's options as the lanes keep them, whatever the channel built them from (a LaneEntry, an
 * album's own options): every field set, in one order, so every job's options have one hidden
 * class and the lanes' reads of them stay monomorphic (docs/architecture.md, code on the message
 * path). Spreading an entry and adding `keptByStop`, which it never holds, is the spread V8 builds
 * slowly, and gave six entry shapes twelve hidden classes; putting `keptByStop` first would still
 * give each entry shape its own (a command's `name`, the job's `handOver`, the channels' key orders).
 */
export function jobOptionsOf(from: JobOptions, keptByStop: boolean): JobOptions {
  return {
    tell: from.tell,
    redelivered: from.redelivered,
    claimDrop: from.claimDrop,
    position: from.position,
    keptByStop,
  };
}

/**
 * A job's signal and state: cancelled (`aborted`), or out of reach of a cancel as it hands over
 * (`taken`), with what it was queued with.
 */
interface JobSignal extends LaneSignal {
  aborted: boolean;
  taken: boolean;
  readonly options: JobOptions;
}

function jobSignal(options: JobOptions): JobSignal {
  const signal: JobSignal = {
    aborted: false,
    taken: false,
    options,
    handingOver: () => {
      signal.taken = !signal.aborted;
      return signal.taken;
    },
  };
  return signal;
}

interface Lane {
  tail: Promise<void>;
  /** One per job not yet finished, the running one included: what `abort` may reach. */
  readonly jobs: Set<JobSignal>;
}

/** The tail of a lane with no job yet: nothing to wait for. */
const SETTLED: Promise<void> = Promise.resolve();

/** Per-key ordered, bounded queues of jobs that can be cancelled (see module comment). */
export class LaneJobs {
  private readonly lanes = new Map<string, Lane>();

  constructor(
    private readonly maxWaiting: number,
    private readonly logger: Logger,
  ) {}

  /**
   * Queue `job` behind the earlier jobs of lane `key`; resolves once it has run (or was
   * cancelled). Undefined (nothing queued) when the lane already holds `maxWaiting` jobs.
   */
  add(key: string, job: LaneJob, options: JobOptions): Promise<void> | undefined {
    const lane: Lane = this.lanes.get(key) ?? { tail: SETTLED, jobs: new Set() };
    if (lane.jobs.size >= this.maxWaiting) return undefined;
    // Each job has its own signal: a cancel aborts the running job's, and a job queued after it
    // runs with one of its own.
    const signal = jobSignal(options);
    const idle = lane.jobs.size === 0;
    lane.jobs.add(signal);
    this.lanes.set(key, lane);
    // An idle lane (the usual case) runs the job at once: there is nothing for it to wait behind.
    const done = idle
      ? this.run(key, lane, signal, job)
      : lane.tail.then(() => this.run(key, lane, signal, job));
    lane.tail = done;
    return done;
  }

  /** Run one job of lane `key` unless it was cancelled; the lane is dropped once it holds none. */
  private async run(key: string, lane: Lane, signal: JobSignal, job: LaneJob): Promise<void> {
    try {
      if (!signal.aborted) await job(signal);
    } catch (error) {
      this.logger.error({ err: error }, "message hand-over failed");
    } finally {
      lane.jobs.delete(signal);
      if (lane.jobs.size === 0 && this.lanes.get(key) === lane) this.lanes.delete(key);
    }
  }

  /** Whether lane `key` holds a job (running or waiting). */
  busy(key: string): boolean {
    return (this.lanes.get(key)?.jobs.size ?? 0) > 0;
  }

  /**
   * Cancel the jobs of lane `key`, neither cancelled nor handing over yet, that `which` picks by
   * what they were queued with; what those were queued with, in their lane's order.
   */
  abort(key: string, which: (options: JobOptions) => boolean): readonly JobOptions[] {
    const lane = this.lanes.get(key);
    if (!lane) return [];
    const pending = [...lane.jobs].filter(
      (signal) => !signal.aborted && !signal.taken && which(signal.options),
    );
    for (const signal of pending) signal.aborted = true;
    return pending.map((signal) => signal.options);
  }

  /** Cancel every job of every lane not handing over yet (see `abort`). */
  abortAll(): readonly JobOptions[] {
    return [...this.lanes.keys()].flatMap((key) => this.abort(key, () => true));
  }

  /** Resolves once every lane is empty, jobs queued meanwhile included. */
  async idle(): Promise<void> {
    while (this.lanes.size > 0) await Promise.all([...this.lanes.values()].map((lane) => lane.tail));
  }
}
