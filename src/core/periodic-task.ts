/**
 * PeriodicTask: an async job run every `intervalMs` on an injected clock until stopped, each run
 * timed from the end of the one before, so runs never overlap and a slow run is not piled up
 * behind. The subscription registry's reconciliation with a shared catalog, the take-over sweep
 * of pending wake-ups, the schedules' catalog refresh and the sessions' failover scan all run this
 * way, so the run-then-arm-again loop lives here once.
 */
import type { Clock, TimerHandle } from "./clock.js";

export interface PeriodicTaskOptions {
  readonly clock: Clock;
  /** Wait between the end of one run and the start of the next (and before the first). */
  readonly intervalMs: number;
  readonly run: () => Promise<void>;
  /** A run that threw or rejected: the next run is armed all the same. */
  readonly onError: (error: unknown) => void;
}

/** Runs `run` periodically from construction until `stop` (see the module comment). */
export class PeriodicTask {
  private timer: TimerHandle | undefined;
  private running: Promise<void> = Promise.resolve();
  private ended = false;

  constructor(private readonly options: PeriodicTaskOptions) {
    this.arm();
  }

  /** Whether `stop` was called: a long run may check it to end early. */
  get stopped(): boolean {
    return this.ended;
  }

  /** Resolves once the run under way (if any) has finished; never rejects. */
  settled(): Promise<void> {
    return this.running;
  }

  /** No more runs; one under way goes on (await `settled` for it). */
  stop(): void {
    this.ended = true;
    if (this.timer !== undefined) this.options.clock.clearTimer(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    if (this.ended) return;
    this.timer = this.options.clock.setTimer(() => {
      this.timer = undefined;
      this.running = this.runOnce();
    }, this.options.intervalMs);
  }

  private async runOnce(): Promise<void> {
    try {
      await this.options.run();
    } catch (error) {
      this.options.onError(error);
    } finally {
      this.arm();
    }
  }
}
