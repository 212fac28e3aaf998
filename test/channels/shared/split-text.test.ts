import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  ANYWHERE,
  type SplitRules,
  type SplitUnits,
  splitRanges,
} from "../../../src/channels/shared/split-text.js";

/** Characters of `text` as units: "\n" ranks 0, " " ranks 1, "|" is never cut before, the rest anywhere. */
function chars(text: string, sizeOf: (ch: string) => number = () => 1): SplitUnits {
  return {
    length: text.length,
    size: (index) => sizeOf(text[index]!),
    rank: (index) => {
      const ch = text[index];
      if (ch === "|") return undefined;
      if (ch === "\n") return 0;
      return ch === " " ? 1 : ANYWHERE;
    },
  };
}

const rules = (limit: number, extra: Partial<SplitRules> = {}): SplitRules => ({
  room: () => ({ whole: limit, cut: limit }),
  minFill: (room) => room / 2,
  ...extra,
});

const pieces = (text: string, units: SplitUnits, r: SplitRules) =>
  splitRanges(units, r).map(({ start, end }) => text.slice(start, end));

describe("splitRanges", () => {
  it("keeps a text that fits whole, and splits nothing out of an empty one", () => {
    expect(pieces("abc", chars("abc"), rules(3))).toEqual(["abc"]);
    expect(splitRanges(chars(""), rules(3))).toEqual([]);
  });

  it("cuts at the best-ranked spot that fills enough of the room", () => {
    const text = "aaaa bbbb\ncc dd";
    // The line end (rank 0) at 9 fills 9 of 12: it beats the later space.
    expect(pieces(text, chars(text), rules(12))).toEqual(["aaaa bbbb", "\ncc dd"]);
  });

  it("takes a lower rank further on when the better cut would leave the chunk too empty", () => {
    const text = "a\nbbbbbb cccc";
    expect(pieces(text, chars(text), rules(10))).toEqual(["a\nbbbbbb", " cccc"]);
    // With no demand on the fill the line end wins even so.
    expect(pieces(text, chars(text), rules(10, { minFill: () => 0 }))).toEqual(["a", "\nbbbbbb", " cccc"]);
  });

  it("falls back to the last safe spot, never one ranked never, and cuts hard only when nothing is safe", () => {
    expect(pieces("abc|def", chars("abc|def"), rules(5))).toEqual(["abc|d", "ef"]);
    expect(pieces("||||||", chars("||||||"), rules(4))).toEqual(["||||", "||"]);
  });

  it("counts each unit by its size (zero for invisible ones) and lets the room shrink for a chunk that is cut", () => {
    const text = "ab<cd>ef";
    const invisible = (ch: string) => ("<>".includes(ch) ? 0 : 1);
    expect(pieces(text, chars(text, invisible), rules(4))).toEqual(["ab<cd>", "ef"]);
    const reserve: SplitRules = { ...rules(6), room: () => ({ whole: 6, cut: 4 }) };
    expect(pieces("abcdef", chars("abcdef"), reserve)).toEqual(["abcdef"]);
    expect(pieces("abcdefg", chars("abcdefg"), reserve)).toEqual(["abcd", "efg"]);
  });

  it("starts the next chunk where the rules resume", () => {
    const text = "aaa   bbb";
    const skipSpaces = rules(5, {
      resume: (cut) => {
        let start = cut;
        while (text[start] === " ") start++;
        return start;
      },
    });
    expect(pieces(text, chars(text), skipSpaces)).toEqual(["aaa  ", "bbb"]);
  });

  it("property: the ranges cover the text in order and each fits its room", () => {
    const text = fc.string({ unit: fc.constantFrom("a", " ", "\n", "|"), maxLength: 300 });
    fc.assert(
      fc.property(text, fc.integer({ min: 1, max: 40 }), (value, limit) => {
        const ranges = splitRanges(chars(value), rules(limit));
        expect(ranges.map(({ start, end }) => value.slice(start, end)).join("")).toBe(value);
        for (const { start, end } of ranges) {
          expect(end).toBeGreaterThan(start);
          expect(end - start).toBeLessThanOrEqual(limit);
        }
      }),
    );
  });
});
