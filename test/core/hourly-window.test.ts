/** The one-hour sliding window behind the wake-up rate limits. */
import { describe, expect, it } from "vitest";
import { HOUR_MS, HourlyWindow } from "../../src/core/hourly-window.js";

describe("HourlyWindow", () => {
  it("counts a key's events within the last hour only", () => {
    const window = new HourlyWindow();
    window.add("a", 0);
    window.add("a", 10);
    window.add("b", 20);
    expect(window.recent("a", 100)).toEqual([0, 10]);
    expect(window.recent("a", HOUR_MS + 5)).toEqual([10]);
    expect(window.recent("a", HOUR_MS + 10)).toEqual([]);
    expect(window.recent("b", HOUR_MS + 10)).toEqual([20]);
    window.forget("b");
    expect(window.recent("b", HOUR_MS + 10)).toEqual([]);
  });

  it("sweeps keys with no event in the last hour once it holds many (memory stays bounded)", () => {
    const window = new HourlyWindow();
    for (let i = 0; i < 1_500; i += 1) window.add(`k${i}`, 0);
    window.add("late", 2 * HOUR_MS);
    const held = (window as unknown as { times: Map<string, unknown> }).times;
    expect([...held.keys()]).toEqual(["late"]);
  });
});
