/**
 * A clock whose timers fire only when the test says so: for deadlines (a lane's drain, a channel's
 * stop) that tests run to the end without waiting on real time.
 */
import type { Clock } from "../../src/core/clock.js";

export interface ManualClock extends Clock {
  /** Runs every timer set and not cleared, once. */
  fire(): void;
  /** How many timers are set and not cleared. */
  pending(): number;
}

export function manualClock(): ManualClock {
  const timers = new Map<number, () => void>();
  let next = 0;
  return {
    now: () => 0,
    setTimer(callback) {
      timers.set(++next, callback);
      return next;
    },
    clearTimer(handle) {
      timers.delete(handle as number);
    },
    pending: () => timers.size,
    fire() {
      for (const [id, callback] of [...timers]) {
        timers.delete(id);
        callback();
      }
    },
  };
}
