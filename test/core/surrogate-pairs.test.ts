import { describe, expect, it } from "vitest";
import {
  clip,
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

describe("clip", () => {
  it("leaves text of exactly `max` characters (or fewer) whole", () => {
    expect(clip("abcde", 5)).toBe("abcde");
    expect(clip("abc", 5)).toBe("abc");
    expect(clip("", 0)).toBe("");
  });

  it("cuts longer text to `max` characters, the last of them the ellipsis", () => {
    expect(clip("abcdef", 5)).toBe("abcd…");
    expect(clip("abcdef", 5)).toHaveLength(5);
  });

  it("never splits an emoji at the cut: it leaves the whole character off instead", () => {
    // "abc😀" + "…" would be 6 units; the cut at 4 falls inside the emoji.
    expect(clip("abc😀def", 5)).toBe("abc…");
    expect(clip("ab😀def", 5)).toBe("ab😀…");
    expect(clip("😀😀😀", 4)).toBe("😀…");
  });

  it("is the ellipsis alone at max 1, and nothing at max 0 or below, where even it does not fit", () => {
    expect(clip("abc", 1)).toBe("…");
    expect(clip("😀", 1)).toBe("…");
    expect(clip("abc", 0)).toBe("");
    expect(clip("abc", -3)).toBe("");
  });
});
