/** isoTime: the text toISOString gives, also when the same time is asked for again, and its error for an invalid date. */
import { describe, expect, it } from "vitest";
import { isoTime } from "../../src/core/iso-time.js";

describe("isoTime", () => {
  it("gives toISOString's text for each time, whether new or asked for again", () => {
    const times = [0, 1_700_000_000_123, 1_700_000_000_123, 1_700_000_000_124, 0, -1];
    for (const time of times) expect(isoTime(new Date(time))).toBe(new Date(time).toISOString());
  });

  it("throws toISOString's RangeError for an invalid date, then carries on", () => {
    expect(() => isoTime(new Date(Number.NaN))).toThrow(RangeError);
    expect(isoTime(new Date(5))).toBe(new Date(5).toISOString());
  });
});
