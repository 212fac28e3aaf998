/**
 * A clock whose timers fire only when the test says so: for deadlines (a lane's drain, a channel's
 * stop) and windows (an album's quiet time and longest wait) that tests run to the end without
 * waiting on real time. A test can fire only the timers of one length, to tell windows apart.
 */
import type { Clock } from "../../src/core/clock.js";

export interface ManualClock extends Clock {
  /** Runs every timer set and not cleared (only those of `ms` when given), once. */
  fire(ms?: number): void;
  /** How many timers are set and not cleared (only those of `ms` when given). */
  pending(ms?: number): number;
  /** How many timers were ever set, cleared and fired ones included. */
  setCount(): number;
}

export function manualClock(): ManualClock {
  const timers = new Map<number, { readonly callback: () => void; readonly ms: number }>();
  let next = 0;
  const of = (ms: number | undefined) =>
    [...timers].filter(([, timer]) => ms === undefined || timer.ms === ms);
  return {
    now: () => 0,
    setTimer(callback, ms) {
      timers.set(++next, { callback, ms });
      return next;
    },
    clearTimer(handle) {
      timers.delete(handle as number);
    },
    pending: (ms) => of(ms).length,
    setCount: () => next,
    fire(ms) {
      for (const [id, timer] of of(ms)) {
        timers.delete(id);
        timer.callback();
      }
    },
  };
}
