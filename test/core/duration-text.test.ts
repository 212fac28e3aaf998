import { describe, expect, it } from "vitest";
import { formatDuration } from "../../src/core/duration-text.js";

describe("formatDuration", () => {
  it("says how long something took in the unit that reads best", () => {
    expect(formatDuration(850)).toBe("850 ms");
    expect(formatDuration(-5)).toBe("0 ms");
    expect(formatDuration(3_200)).toBe("3.2 s");
    expect(formatDuration(125_000)).toBe("2 min 5 s");
    expect(formatDuration(120_000)).toBe("2 min");
  });
});
