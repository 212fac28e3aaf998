import { describe, expect, it } from "vitest";
import {
  clip,
  clipWithMarker,
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

describe("clipWithMarker", () => {
  const counted = (dropped: number) => `… [${dropped} more]`;

  it("leaves text of `keep` characters (or fewer) whole, with no marker", () => {
    expect(clipWithMarker("abcde", 5, counted)).toBe("abcde");
    expect(clipWithMarker("abc", 5, counted)).toBe("abc");
    expect(clipWithMarker("", 0, counted)).toBe("");
    expect(clipWithMarker("", -1, counted)).toBe("");
  });

  it("keeps `keep` characters of longer text and adds the marker on top, told what was left off", () => {
    expect(clipWithMarker("abcdefgh", 5, counted)).toBe("abcde… [3 more]");
    expect(clipWithMarker("abcdef", 5, () => "")).toBe("abcde");
  });

  it("never splits an emoji straddling the cut: it leaves the whole character off and counts it as dropped", () => {
    // The cut at 4 falls between the emoji's halves: only "abc" is kept, 5 units dropped.
    expect(clipWithMarker("abc😀def", 4, counted)).toBe("abc… [5 more]");
    // A cut just after the emoji keeps it.
    expect(clipWithMarker("abc😀def", 5, counted)).toBe("abc😀… [3 more]");
    expect(clipWithMarker("😀😀", 1, counted)).toBe("… [4 more]");
  });

  it("keeps nothing but the marker at keep 0 or below, counting the whole text as dropped", () => {
    expect(clipWithMarker("abc", 0, counted)).toBe("… [3 more]");
    expect(clipWithMarker("abc", -3, counted)).toBe("… [3 more]");
    expect(clipWithMarker("😀", -1, counted)).toBe("… [2 more]");
  });
});
