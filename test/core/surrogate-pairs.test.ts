import { describe, expect, it } from "vitest";
import {
  cutBeforeCharacter,
  cutBetweenCharacters,
  splitsSurrogatePair,
} from "../../src/core/surrogate-pairs.js";

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

describe("cutBeforeCharacter and cutBetweenCharacters", () => {
  it("move a cut inside a character back before it, or on past it, and leave other cuts alone", () => {
    const text = "a😀b";
    expect([1, 2, 3].map((index) => cutBeforeCharacter(text, index))).toEqual([1, 1, 3]);
    expect([1, 2, 3].map((index) => cutBetweenCharacters(text, index))).toEqual([1, 3, 3]);
  });
});
