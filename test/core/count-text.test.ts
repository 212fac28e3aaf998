import { describe, expect, it } from "vitest";
import { groupedCount } from "../../src/core/count-text.js";

describe("groupedCount", () => {
  it("groups thousands with commas, as toLocaleString('en') does for whole numbers", () => {
    for (const count of [0, 7, 999, 1_000, 8_000, 12_345, 100_000, 1_234_567, -1_234_567, 2 ** 40])
      expect(groupedCount(count)).toBe(count.toLocaleString("en"));
  });
});
