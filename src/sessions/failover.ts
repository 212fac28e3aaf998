/**
 * Failover: every process looks, at an interval, for sessions with unfinished work (the shared
 * active index: a turn in progress or queued input) whose lease nobody holds — their holder died
 * or paused past its lease — and resumes them. Resuming goes through the normal pump: it takes
 * the lease (only one process wins), reloads the session and continues the stored turn, where
 * started tool calls are reported as interrupted, never run again (turn-recovery.ts).
 */
import type { Logger } from "pino";
import type { Clock } from "../core/clock.js";
import { PeriodicTask } from "../core/periodic-task.js";

export interface FailoverOptions {
  /** Sessions with unfinished work, across processes, whose lease nobody holds now (one store step). */
  readonly orphans: () => Promise<readonly string[]>;
  /** Resume the session here (its pump takes the lease, or finds it taken). */
  readonly resume: (sessionId: string) => Promise<void>;
  readonly intervalMs: number;
  /** The timers the scans wait on. */
  readonly clock: Clock;
  readonly logger: Logger;
}

/** The periodic scan for orphaned sessions, on a PeriodicTask from `start` to `stop`. */
export class FailoverWatch {
  private task: PeriodicTask | undefined;

  constructor(private readonly options: FailoverOptions) {}

  /** Start scanning every `intervalMs` (each wait timed from the end of the scan before). */
  start(): void {
    this.task ??= new PeriodicTask({
      clock: this.options.clock,
      intervalMs: this.options.intervalMs,
      run: () => this.scanOnce(),
      onError: (error) => this.options.logger.warn({ err: error }, "scanning for orphaned sessions failed"),
    });
  }

  /** Stop scanning for good; resolves once a scan under way has ended. */
  async stop(): Promise<void> {
    this.task?.stop();
    await this.task?.settled();
  }

  /**
   * Listing the orphans failing rejects (the task reports it); one orphan failing to resume (an
   * unreadable record, say) is logged, and the others still are.
   */
  private async scanOnce(): Promise<void> {
    const orphans = await this.options.orphans();
    for (const sessionId of orphans) {
      this.options.logger.info({ sessionId }, "taking over a session whose lease lapsed");
      try {
        await this.options.resume(sessionId);
      } catch (error) {
        this.options.logger.error({ err: error, sessionId }, "resuming an orphaned session failed");
      }
    }
  }
}
