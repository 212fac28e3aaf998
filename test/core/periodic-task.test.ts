/**
 * PeriodicTask runs its job every interval, timing each run from the end of the one before (so
 * runs never overlap), goes on after a run that failed, and arms nothing once stopped.
 */
import { describe, expect, it } from "vitest";
import type { Clock, TimerHandle } from "../../src/core/clock.js";
import { PeriodicTask } from "../../src/core/periodic-task.js";

/** A clock whose timers run only when the test fires them. */
class HeldTimers implements Clock {
  private next = 0;
  readonly timers = new Map<number, { readonly callback: () => void; readonly ms: number }>();

  now(): number {
    return 0;
  }

  setTimer(callback: () => void, ms: number): TimerHandle {
    this.next += 1;
    this.timers.set(this.next, { callback, ms });
    return this.next;
  }

  clearTimer(handle: TimerHandle): void {
    this.timers.delete(handle as number);
  }

  /** The waits of the timers set and not run yet. */
  waits(): number[] {
    return [...this.timers.values()].map((t) => t.ms);
  }

  /** Run the timers set so far. */
  fire(): void {
    const due = [...this.timers];
    this.timers.clear();
    for (const [, timer] of due) timer.callback();
  }
}

/** A run the test ends by hand. */
function heldRun() {
  let finish: (error?: Error) => void = () => undefined;
  const done = new Promise<void>((resolve, reject) => {
    finish = (error) => (error ? reject(error) : resolve());
  });
  return { done, finish: (error?: Error) => finish(error) };
}

describe("PeriodicTask", () => {
  it("arms the next run only once the one before has ended", async () => {
    const clock = new HeldTimers();
    const runs = [heldRun(), heldRun()];
    let started = 0;
    const task = new PeriodicTask({
      clock,
      intervalMs: 1_000,
      run: () => (runs[started++] ?? heldRun()).done,
      onError: () => undefined,
    });
    expect(clock.waits()).toEqual([1_000]);

    clock.fire();
    expect(started).toBe(1);
    expect(clock.waits()).toEqual([]); // no second run while the first is under way

    runs[0]?.finish();
    await task.settled();
    expect(clock.waits()).toEqual([1_000]);
    clock.fire();
    expect(started).toBe(2);
    task.stop();
    runs[1]?.finish();
    await task.settled();
  });

  it("reports a run that failed and goes on", async () => {
    const clock = new HeldTimers();
    const errors: unknown[] = [];
    const task = new PeriodicTask({
      clock,
      intervalMs: 500,
      run: () => Promise.reject(new Error("store down")),
      onError: (error) => errors.push(error),
    });
    clock.fire();
    await task.settled();
    expect(errors).toEqual([new Error("store down")]);
    expect(clock.waits()).toEqual([500]);
    task.stop();
  });

  it("arms nothing once stopped, not even after a run that was under way", async () => {
    const clock = new HeldTimers();
    const run = heldRun();
    const task = new PeriodicTask({
      clock,
      intervalMs: 1_000,
      run: () => run.done,
      onError: () => undefined,
    });
    clock.fire();
    task.stop();
    expect(task.stopped).toBe(true);
    run.finish();
    await task.settled();
    expect(clock.waits()).toEqual([]);

    const idle = new PeriodicTask({
      clock,
      intervalMs: 1_000,
      run: async () => undefined,
      onError: () => undefined,
    });
    idle.stop();
    expect(clock.waits()).toEqual([]);
  });
});
