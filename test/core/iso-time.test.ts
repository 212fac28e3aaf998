/** isoTime: the text toISOString gives, also when the same time or second is asked for again, across seconds and years, when a Date is changed after a call, and its error for an invalid date. */
import { describe, expect, it } from "vitest";
import { isoTime } from "../../src/core/iso-time.js";

describe("isoTime", () => {
  it("gives toISOString's text for each time, whether new or asked for again", () => {
    const times = [0, 1_700_000_000_123, 1_700_000_000_123, 1_700_000_000_124, 0, -1];
    for (const time of times) expect(isoTime(new Date(time))).toBe(new Date(time).toISOString());
  });

  it("reads the time the Date holds at each call, so a Date changed after one call gives its new text", () => {
    const date = new Date(1_700_000_000_000);
    expect(isoTime(date)).toBe("2023-11-14T22:13:20.000Z");
    date.setTime(1_700_000_000_001);
    expect(isoTime(date)).toBe("2023-11-14T22:13:20.001Z");
    date.setTime(Number.NaN);
    expect(() => isoTime(date)).toThrow(RangeError);
    expect(isoTime(new Date(1_700_000_000_001))).toBe("2023-11-14T22:13:20.001Z");
  });

  it("gives toISOString's text within one second, across seconds, before 1970 and past year 9999", () => {
    const times = [
      1_700_000_000_000, 1_700_000_000_007, 1_700_000_000_042, 1_700_000_000_999, 1_700_000_001_000, -1, -999,
      -1_000, -1_001, 253_402_300_799_999, 253_402_300_800_000, -62_198_755_200_001, 8.64e15, -8.64e15,
    ];
    for (const time of times) expect(isoTime(new Date(time))).toBe(new Date(time).toISOString());
  });

  it("throws toISOString's RangeError for an invalid date, then carries on", () => {
    expect(() => isoTime(new Date(Number.NaN))).toThrow(RangeError);
    expect(isoTime(new Date(5))).toBe(new Date(5).toISOString());
  });
});
