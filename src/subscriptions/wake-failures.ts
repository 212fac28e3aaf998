/**
 * Failing hand-overs of wake-ups: a subscription whose wake-up could not be handed over (its
 * platform not connected, the session layer draining, a membership check that failed) tries again
 * after a growing pause — 15 s, doubling, at most 5 min — until one goes, which ends the run. A
 * run that lasts an hour is not left to the logs alone: the next try that fails tells the
 * subscriber (wake-delivery.ts posts the notice into their thread), once per run, so a
 * subscription that stays broken says so once and again only after it worked in between. The run
 * (its failures, since when, the pause) is counted per process, by the WakeScheduler that holds
 * the batch; whether the subscriber was told is shared by the processes (failure-notices.ts), so
 * of several processes whose runs reach the hour only the first to get there tells them.
 */
import { backoffMs } from "../core/backoff.js";
import { HOUR_MS } from "../store/slot-budget.js";

/** How long a subscription's hand-overs fail in a row before its subscriber is told. */
export const WAKE_FAILING_NOTICE_MS = HOUR_MS;

/** The pause before the first retry, doubled at each failure after. */
const FIRST_RETRY_MS = 15_000;

/** The longest pause before a batch whose hand-over kept failing tries again. */
const MAX_RETRY_MS = 5 * 60_000;

/** The pause before the next try after `failures` failed hand-overs in a row: 15 s, doubling, at most 5 min. */
export function retryDelayMs(failures: number): number {
  return backoffMs(Math.max(0, failures - 1), FIRST_RETRY_MS, MAX_RETRY_MS);
}

/** A run of failed hand-overs: how many, since when, and whether the subscriber was told. */
interface FailingRun {
  readonly failures: number;
  readonly since: number;
  readonly told: boolean;
}

/** The runs of failed hand-overs per subscription (see the module comment). */
export class HandOverFailures {
  private readonly runs = new Map<string, FailingRun>();

  /** Whether the subscription's last hand-over failed (it waits for its retry). */
  failing(subscriptionId: string): boolean {
    return this.runs.has(subscriptionId);
  }

  /** Whether a hand-over tried at `now` should tell the subscriber if it fails too. */
  tellIfFails(subscriptionId: string, now: number): boolean {
    const run = this.runs.get(subscriptionId);
    return run !== undefined && !run.told && now - run.since >= WAKE_FAILING_NOTICE_MS;
  }

  /**
   * A hand-over failed at `now` (`told`: it was one that told the subscriber): the pause before
   * the next try.
   */
  failed(subscriptionId: string, now: number, told: boolean): number {
    const run = this.runs.get(subscriptionId);
    const failures = (run?.failures ?? 0) + 1;
    this.runs.set(subscriptionId, {
      failures,
      since: run?.since ?? now,
      told: (run?.told ?? false) || told,
    });
    return retryDelayMs(failures);
  }

  /** A hand-over went (or the subscription was removed): its run, if any, ends. */
  ended(subscriptionId: string): void {
    this.runs.delete(subscriptionId);
  }
}
