/**
 * settlesWithin: true when the work settles in time, false once the time runs out, a rejection
 * passed on; on a clock it is given (a lane drain's), its timer set there and cleared as soon as
 * the work settles, a rejection included.
 */
import { describe, expect, it } from "vitest";
import { settlesWithin } from "../../src/core/settles-within.js";
import { manualClock } from "../support/manual-clock.js";

describe("settlesWithin", () => {
  it("is true when the work settles in time, and false once the time runs out", async () => {
    expect(await settlesWithin(Promise.resolve(), 1000)).toBe(true);
    expect(await settlesWithin(new Promise(() => {}), 1)).toBe(false);
  });

  it("waits on the clock it is given, and clears its timer there once the work settles", async () => {
    const clock = manualClock();
    const waiting = settlesWithin(new Promise(() => {}), 60_000, clock);
    expect(clock.pending(60_000)).toBe(1);
    clock.fire(60_000);
    expect(await waiting).toBe(false);

    expect(await settlesWithin(Promise.resolve(), 60_000, clock)).toBe(true);
    expect(clock.pending()).toBe(0);
  });

  it("passes a rejection on, and clears its timer then too", async () => {
    const clock = manualClock();
    await expect(settlesWithin(Promise.reject(new Error("store down")), 60_000, clock)).rejects.toThrow(
      "store down",
    );
    expect(clock.setCount()).toBe(1);
    expect(clock.pending()).toBe(0);
  });
});
