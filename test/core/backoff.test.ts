/**
 * The capped doubling backoff: the first pause, each next one twice the last, held at the cap
 * however many retries follow.
 */
import { describe, expect, it } from "vitest";
import { backoffMs } from "../../src/core/backoff.js";

describe("backoffMs", () => {
  it("starts at the first pause and doubles it with each attempt", () => {
    expect([0, 1, 2, 3].map((attempt) => backoffMs(attempt, 10, 1_000))).toEqual([10, 20, 40, 80]);
  });

  it("never goes above the cap, even after very many attempts", () => {
    expect([4, 5, 6].map((attempt) => backoffMs(attempt, 100, 1_000))).toEqual([1_000, 1_000, 1_000]);
    expect(backoffMs(10_000, 100, 1_000)).toBe(1_000);
  });

  it("gives the cap at once when the first pause is above it", () => {
    expect(backoffMs(0, 5_000, 1_000)).toBe(1_000);
  });
});
