/**
 * A clock for the subscription tests of several processes on one store: real time, moved on by
 * the test, each process's timers firing only when its clock is moved — so one process can hold a
 * batch for as long as the test likes (or never fire it: a crash) while another runs on.
 */
import type { Clock, TimerHandle } from "../../src/core/clock.js";

/** Real time moved on by `advance`, whose timers fire only when it brings them due. */
export class SteppedClock implements Clock {
  private skew = 0;
  private next = 0;
  private readonly timers = new Map<number, { readonly due: number; readonly callback: () => void }>();

  now(): number {
    return Date.now() + this.skew;
  }

  setTimer(callback: () => void, ms: number): TimerHandle {
    this.next += 1;
    this.timers.set(this.next, { due: this.now() + ms, callback });
    return this.next;
  }

  clearTimer(handle: TimerHandle): void {
    this.timers.delete(handle as number);
  }

  /** Move time on by `ms` and fire the timers due by then, once each, in order of due time. */
  advance(ms: number): void {
    this.skew += ms;
    const due = [...this.timers].filter(([, t]) => t.due <= this.now()).sort(([, a], [, b]) => a.due - b.due);
    for (const [handle, timer] of due) {
      this.timers.delete(handle);
      timer.callback();
    }
  }
}
