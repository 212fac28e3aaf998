/**
 * Clock: the time source and timers the subscription, schedule and MCP code run on, injected so
 * tests can drive debounces, rate windows and cool-downs without waiting, and the benchmark can
 * measure real delays.
 */

/** An opaque handle returned by `setTimer`. */
export type TimerHandle = unknown;

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Run `callback` once after `ms` milliseconds. */
  setTimer(callback: () => void, ms: number): TimerHandle;
  clearTimer(handle: TimerHandle): void;
}

/** The real clock: Date.now and Node timers (unref'd, so pending wake-ups never keep a process alive). */
export const systemClock: Clock = Object.freeze({
  now: () => Date.now(),
  setTimer(callback: () => void, ms: number): TimerHandle {
    const timer = setTimeout(callback, Math.max(0, ms));
    timer.unref?.();
    return timer;
  },
  clearTimer(handle: TimerHandle): void {
    clearTimeout(handle as NodeJS.Timeout);
  },
});
