/**
 * Runs of failed hand-overs (wake-failures.ts): the pause before each retry grows from 15 s,
 * doubling, to at most 5 min; a hand-over tried once the run has lasted an hour is the one that
 * tells the subscriber, once per run; a delivered wake-up ends the run, and a new one starts over.
 */
import { describe, expect, it } from "vitest";
import {
  HandOverFailures,
  retryDelayMs,
  WAKE_FAILING_NOTICE_MS,
} from "../../src/subscriptions/wake-failures.js";

const T0 = Date.parse("2026-12-05T10:00:00Z");

describe("retryDelayMs", () => {
  it("is 15 s after one failure, doubling, at most 5 min", () => {
    expect([1, 2, 3, 4, 5, 6, 20].map(retryDelayMs)).toEqual([
      15_000, 30_000, 60_000, 120_000, 240_000, 300_000, 300_000,
    ]);
  });
});

describe("HandOverFailures", () => {
  it("asks the first try past an hour of failures to tell, and no try after it told", () => {
    const failures = new HandOverFailures();
    expect(failures.failing("sub1")).toBe(false);
    expect(failures.tellIfFails("sub1", T0)).toBe(false);
    expect(failures.failed("sub1", T0, false)).toBe(15_000);
    expect(failures.failed("sub1", T0 + 15_000, false)).toBe(30_000);
    expect(failures.failing("sub1")).toBe(true);
    expect(failures.tellIfFails("sub1", T0 + WAKE_FAILING_NOTICE_MS - 1)).toBe(false);
    expect(failures.tellIfFails("sub1", T0 + WAKE_FAILING_NOTICE_MS)).toBe(true);
    // That try failed without telling (its notice could not be asked for): the next one asks again.
    failures.failed("sub1", T0 + WAKE_FAILING_NOTICE_MS, false);
    expect(failures.tellIfFails("sub1", T0 + WAKE_FAILING_NOTICE_MS + 1)).toBe(true);
    failures.failed("sub1", T0 + WAKE_FAILING_NOTICE_MS + 1, true);
    expect(failures.tellIfFails("sub1", T0 + 10 * WAKE_FAILING_NOTICE_MS)).toBe(false);
    expect(failures.tellIfFails("sub2", T0 + 10 * WAKE_FAILING_NOTICE_MS)).toBe(false);
  });

  it("a delivered wake-up ends the run: the pauses and the hour start over", () => {
    const failures = new HandOverFailures();
    for (let i = 0; i < 5; i += 1) failures.failed("sub1", T0, i === 4);
    failures.ended("sub1");
    expect(failures.failing("sub1")).toBe(false);
    const later = T0 + 5 * WAKE_FAILING_NOTICE_MS;
    expect(failures.failed("sub1", later, false)).toBe(15_000);
    expect(failures.tellIfFails("sub1", later + WAKE_FAILING_NOTICE_MS - 1)).toBe(false);
    expect(failures.tellIfFails("sub1", later + WAKE_FAILING_NOTICE_MS)).toBe(true);
  });
});
