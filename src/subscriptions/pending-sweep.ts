/**
 * PendingSweep: with several processes on one store, a matched message's batch waits in the
 * memory of the process that saw it (a platform hands each message to one process). Should that
 * process stop before the batch goes — a clean shutdown or a crash alike — the processes still
 * running take it over: every `intervalMs` each one rebuilds, from the shared buffer, the batches
 * of matched messages its subscriptions were not woken for yet and that are overdue — buffered
 * longer ago than a live process holds a fresh batch (the longest wait) plus a grace of one
 * debounce — so a batch a live process is about to deliver is left to it, even of messages the
 * platform delivered late (sent long before they were buffered). A sweep reads each channel's
 * buffer once, however many subscriptions watch it (pending-rebuild.ts). A batch held back (rate
 * limit, a busy session, a failing hand-over) may then wait in several processes: wake claims
 * (wake-claims.ts) keep its messages from waking the subscription twice. A single process needs
 * none of this (its batches are rebuilt when it opens again), and gets no sweep.
 */
import type { Clock } from "../core/clock.js";
import { PeriodicTask } from "../core/periodic-task.js";
import type { Subscription } from "./subscription.js";
import type { SubscriptionSettings } from "./subscription-settings.js";

export interface PendingSweepOptions {
  readonly clock: Clock;
  /** How often to sweep. */
  readonly intervalMs: number;
  readonly settings: Pick<SubscriptionSettings, "debounceMs" | "maxWaitMs">;
  /** The subscriptions known now. */
  readonly subscriptions: () => readonly Subscription[];
  /**
   * Batch the subscriptions' matches not woken for yet that were buffered at or before
   * `bufferedBy`, reading each channel's buffer once; `stopped` ends it early. Never rejects.
   */
  readonly rebuild: (
    subscriptions: readonly Subscription[],
    bufferedBy: number,
    stopped: () => boolean,
  ) => Promise<void>;
  readonly onError: (error: unknown, context: string) => void;
}

/** Periodic take-over of overdue batches left by a stopped process (see the module comment). */
export class PendingSweep {
  private readonly task: PeriodicTask;

  constructor(private readonly options: PendingSweepOptions) {
    this.task = new PeriodicTask({
      clock: options.clock,
      intervalMs: options.intervalMs,
      run: () => this.sweep(),
      onError: (error) => options.onError(error, "sweeping for overdue wake-ups"),
    });
  }

  /** Resolves once a sweep under way has finished. */
  settled(): Promise<void> {
    return this.task.settled();
  }

  /** Stop sweeping; resolves once a sweep under way has finished. */
  async close(): Promise<void> {
    this.task.stop();
    await this.task.settled();
  }

  private async sweep(): Promise<void> {
    const { clock, settings } = this.options;
    const bufferedBy = clock.now() - settings.maxWaitMs - settings.debounceMs;
    await this.options.rebuild(this.options.subscriptions(), bufferedBy, () => this.task.stopped);
  }
}
