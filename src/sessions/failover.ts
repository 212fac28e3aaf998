/**
 * Failover: every process looks, at an interval, for sessions with unfinished work (the shared
 * active index: a turn in progress or queued input) whose lease nobody holds — their holder died
 * or paused past its lease — and resumes them. Resuming goes through the normal pump: it takes
 * the lease (only one process wins), reloads the session and continues the stored turn, where
 * started tool calls are reported as interrupted, never run again (turn-recovery.ts).
 */
import type { Logger } from "pino";

export interface FailoverOptions {
  /** Sessions with unfinished work, across processes, whose lease nobody holds now (one store step). */
  readonly orphans: () => Promise<readonly string[]>;
  /** Resume the session here (its pump takes the lease, or finds it taken). */
  readonly resume: (sessionId: string) => Promise<void>;
  readonly intervalMs: number;
  readonly logger: Logger;
}

/** The periodic scan for orphaned sessions. */
export class FailoverWatch {
  private timer: NodeJS.Timeout | undefined;
  private scanning: Promise<void> | undefined;

  constructor(private readonly options: FailoverOptions) {}

  /** Start scanning every `intervalMs`. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.scan(), this.options.intervalMs);
    this.timer.unref();
  }

  /** Scan once now (one scan at a time); resolves when it is done. */
  scan(): Promise<void> {
    this.scanning ??= this.scanOnce().finally(() => {
      this.scanning = undefined;
    });
    return this.scanning;
  }

  /** Stop scanning; resolves once a scan under way has ended. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.scanning;
  }

  /** One orphan failing to resume (an unreadable record, say) is logged; the others still are. */
  private async scanOnce(): Promise<void> {
    let orphans: readonly string[];
    try {
      orphans = await this.options.orphans();
    } catch (error) {
      this.options.logger.warn({ err: error }, "scanning for orphaned sessions failed");
      return;
    }
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
