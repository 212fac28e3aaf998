import { describe, expect, it } from "vitest";
import { splitsSurrogatePair } from "../../src/core/surrogate-pairs.js";

describe("splitsSurrogatePair", () => {
  it("is true only between the two halves of a character outside the BMP", () => {
    const text = "a😀b";
    expect([0, 1, 2, 3, 4].map((index) => splitsSurrogatePair(text, index))).toEqual([
      false,
      false,
      true,
      false,
      false,
    ]);
    expect(splitsSurrogatePair("\uD83D", 1)).toBe(false);
  });
});
