/**
 * PendingSweep: with several processes on one store, a matched message's batch waits in the
 * memory of the process that saw it (a platform hands each message to one process). Should that
 * process stop before the batch goes — a clean shutdown or a crash alike — the processes still
 * running take it over: every `intervalMs` each one rebuilds, from the shared buffer, the batches
 * of matched messages its subscriptions were not woken for yet and that are overdue — buffered
 * longer ago than a live process holds a fresh batch (the longest wait) plus a grace of one
 * debounce — so a batch a live process is about to deliver is left to it, even of messages the
 * platform delivered late (sent long before they were buffered). A batch held back (rate limit, a
 * busy session, a failing hand-over) may then wait in several processes: wake claims
 * (wake-claims.ts) keep its messages from waking the subscription twice. A single process needs
 * none of this (its batches are rebuilt when it opens again), and gets no sweep.
 */
import type { Clock, TimerHandle } from "../core/clock.js";
import type { Subscription } from "./subscription.js";
import type { SubscriptionSettings } from "./subscription-settings.js";

export interface PendingSweepOptions {
  readonly clock: Clock;
  /** How often to sweep. */
  readonly intervalMs: number;
  readonly settings: Pick<SubscriptionSettings, "debounceMs" | "maxWaitMs">;
  /** The subscriptions known now. */
  readonly subscriptions: () => readonly Subscription[];
  /** Batch the subscription's matches not woken for yet that were buffered at or before `bufferedBy` (never rejects). */
  readonly rebuild: (subscription: Subscription, bufferedBy: number) => Promise<void>;
}

/** Periodic take-over of overdue batches left by a stopped process (see the module comment). */
export class PendingSweep {
  private timer: TimerHandle | undefined;
  private running: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly options: PendingSweepOptions) {
    this.arm();
  }

  /** Resolves once a sweep under way has finished. */
  settled(): Promise<void> {
    return this.running;
  }

  /** Stop sweeping; resolves once a sweep under way has finished. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) this.options.clock.clearTimer(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private arm(): void {
    if (this.closed) return;
    this.timer = this.options.clock.setTimer(() => {
      this.timer = undefined;
      this.running = this.sweep().finally(() => this.arm());
    }, this.options.intervalMs);
  }

  private async sweep(): Promise<void> {
    const { clock, settings } = this.options;
    const bufferedBy = clock.now() - settings.maxWaitMs - settings.debounceMs;
    for (const subscription of this.options.subscriptions()) {
      if (this.closed) return;
      await this.options.rebuild(subscription, bufferedBy);
    }
  }
}
