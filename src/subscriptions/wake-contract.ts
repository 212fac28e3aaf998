/**
 * What the WakeScheduler (wake-scheduler.ts) takes and hands over: a matched message (WakeItem),
 * a batch ready to wake its session (ReadyBatch), the scheduler's timing and options, the error a
 * `deliver` rejects with when its notice to the subscriber failed too, and the store key its
 * rate limit counts under. Kept apart from the scheduler so the modules around it (wake-batch.ts,
 * wake-hand-over.ts, wake-delivery.ts) depend on these shapes, not on the scheduler class.
 */
import type { BufferEntry, BufferPosition } from "./buffer-entry.js";
import type { Clock } from "../core/clock.js";
import type { SlotBudget } from "../store/slot-budget.js";
import type { WakeClaims } from "./wake-claims.js";

/** One matched message and where it sits in its channel buffer. */
export interface WakeItem {
  readonly entry: BufferEntry;
  readonly position: BufferPosition;
}

/** A batch ready to wake its session: items oldest first; `omitted` older matches were dropped for size. */
export interface ReadyBatch {
  readonly subscriptionId: string;
  readonly sessionId: string;
  readonly items: readonly WakeItem[];
  readonly omitted: number;
  /**
   * Set when the subscription's hand-overs have failed for an hour and its subscriber was not told
   * yet (wake-failures.ts): should this one fail too, `deliver` tells them.
   */
  readonly tellIfFails?: boolean;
}

export interface WakeTiming {
  readonly debounceMs: number;
  readonly maxBatch: number;
  readonly maxWaitMs: number;
  readonly maxWakesPerHour: number;
  /** How often a batch held for a busy session re-checks on its own (default 15 s). */
  readonly busyRetryMs?: number;
}

export interface WakeSchedulerOptions extends WakeTiming {
  readonly clock: Clock;
  /** Whether the session is running a turn now (in any process: a promise when that needs a look). */
  readonly isBusy: (sessionId: string) => boolean | Promise<boolean>;
  /**
   * Wake the session with the batch: resolve once it was accepted (or is no longer wanted), reject
   * when it was not delivered — reported to `onError`, and the batch tries again later. Rejecting
   * a batch with `tellIfFails`, it tells the subscriber their wake-ups keep failing (taken as told,
   * unless it rejects with a NoticeNotPostedError: then the next failing try tells again).
   */
  readonly deliver: (batch: ReadyBatch) => Promise<void>;
  readonly onError: (error: unknown, subscriptionId: string) => void;
  /** Claims matched messages' wake-ups in the store (several processes); all are this process's without. */
  readonly claims?: WakeClaims;
  /**
   * Where wake-ups per subscription are counted (store/slot-budget.ts): the app's budget over the
   * 'budgets' space, so every process on the store counts together and a restart keeps the count.
   */
  readonly budget: SlotBudget;
}

/**
 * A hand-over that failed and whose notice to the subscriber (`tellIfFails`) could not be posted
 * either: not counted as told, so the next failing try tells again. Its cause is the failure.
 */
export class NoticeNotPostedError extends Error {
  constructor(failure: unknown) {
    const why = failure instanceof Error ? failure.message : String(failure);
    super(`${why} (telling the subscriber failed too)`, { cause: failure });
    this.name = "NoticeNotPostedError";
  }
}

/** The store key (in 'budgets') under which a subscription's wake-up slots are counted. */
export const subscriptionWakeBudgetKey = (subscriptionId: string): string => `wake:${subscriptionId}`;
