import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  blockBoundary,
  FenceTracker,
  fenceCloseWithin,
  grewFrom,
  markdownTail,
  openFence,
  openTable,
} from "../../../src/channels/shared/markdown-tail.js";

/** The tail of an answer seen for the first time (the open fence found by reading all before the cut). */
const tailOf = (markdown: string, chars: number) => markdownTail(markdown, chars, new FenceTracker());

describe("markdownTail", () => {
  it("gives back a short answer whole", () => {
    expect(tailOf("# Title\n\nbody", 100)).toEqual({ text: "# Title\n\nbody", cut: false });
  });

  it("cuts before the first flush-left block in the last `chars` characters", () => {
    const text = "first paragraph\n\n- item\n  continued\n\n  indented part of the item\n\nlast paragraph";
    // The indented block is a continuation of the list item: the cut goes past it.
    expect(tailOf(text, 60)).toEqual({ text: "last paragraph", cut: true });
    expect(tailOf(text, 72)).toEqual({
      text: "- item\n  continued\n\n  indented part of the item\n\nlast paragraph",
      cut: true,
    });
  });

  it("cuts at a flush-left line when no blank line is near, else between whole characters", () => {
    expect(tailOf(`${"a line\n".repeat(10)}end`, 12)).toEqual({ text: "a line\nend", cut: true });
    expect(tailOf("😀".repeat(10), 5)).toEqual({ text: "😀😀", cut: true });
  });

  it("reopens a code fence open at the cut, with its own marker", () => {
    const code = `intro\n\n~~~~python\n${"x = 1\n\n".repeat(20)}~~~~\n`;
    expect(tailOf(`${code}\n${"y\n".repeat(30)}`, 20).text.startsWith("~~~~")).toBe(false);
    const open = `intro\n\n\`\`\`\`ts\n\`\`\`\nstill code\n\n${"const x = 1;\n\n".repeat(20)}`;
    const tail = tailOf(open, 30);
    expect(tail.text.startsWith("````\nconst x = 1;")).toBe(true);
    const closed = `\`\`\`ts\ncode\n\`\`\`\n\n${"after\n\n".repeat(20)}`;
    expect(tailOf(closed, 20).text.startsWith("after")).toBe(true);
  });
});

describe("openTable", () => {
  it("gives the header and delimiter rows of a table the text ends inside", () => {
    expect(openTable("Intro\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")).toBe("| a | b |\n|---|---|");
    expect(openTable("| a | b |\n|:--|--:|\n| 1 | 2 |\n")).toBe("| a | b |\n|:--|--:|");
    expect(openTable("a | b\n--- | ---\n1 | 2\n")).toBe("a | b\n--- | ---");
  });

  it("gives nothing once the table has ended, or for what is not a table", () => {
    expect(openTable("| a | b |\n|---|---|\n| 1 | 2 |\n\nAfter\n")).toBeUndefined();
    expect(openTable("| a | b |\n|---|---|\n| 1 | 2 |\n\n")).toBeUndefined();
    expect(openTable("Title\n---\n")).toBeUndefined();
    expect(openTable("just | text\nmore\n")).toBeUndefined();
    expect(openTable("- item\n- item\n")).toBeUndefined();
  });

  it("is repeated before the rows after markdownTail's cut", () => {
    const rows = Array.from({ length: 40 }, (_, i) => `| r${i} | ${i} |`).join("\n");
    const tail = tailOf(`Intro\n\n| name | n |\n|---|---|\n${rows}\n`, 60);
    expect(tail.text.startsWith("| name | n |\n|---|---|\n| r")).toBe(true);
  });
});

describe("blockBoundary", () => {
  it("finds a block start, else a line start, within the reach only", () => {
    const text = "aaaa\nbbbb\n\ncccc\n\ndddd";
    expect(blockBoundary(text, 0, text.length)).toBe(11);
    expect(blockBoundary(text, 0, 10)).toBe(5);
    expect(blockBoundary(text, 0, 10, true)).toBeUndefined();
    expect(blockBoundary(text, 0, text.length, true)).toBe(11);
    expect(blockBoundary(text, 12, 15)).toBeUndefined();
    expect(blockBoundary("no break at all", 0, 15)).toBeUndefined();
  });
});

describe("fenceCloseWithin", () => {
  it("finds the line that closes a fence with its own marker, within the reach", () => {
    const text = "````ts\ncode\n```\nstill code\n````\n\nafter";
    expect(fenceCloseWithin(text, "````", 7, text.length)).toBe(31);
    expect(fenceCloseWithin(text, "````", 7, 30)).toBeUndefined();
    expect(fenceCloseWithin(text, "~~~", 7, text.length)).toBeUndefined();
  });

  it("leaves the fence scan of openFence as it was (its own position in the text)", () => {
    const text = "```\ncode\n```\n\n";
    expect(fenceCloseWithin(text, "```", 4, text.length)).toBe(12);
    expect(openFence("```ts\nopen")).toBe("```");
  });
});

describe("FenceTracker", () => {
  /** Lines a model's markdown is made of, fence lines of every kind among them. */
  const fenceLine = fc
    .tuple(
      fc.constantFrom("", " ", "   ", "    "),
      fc.constantFrom("`", "~"),
      fc.integer({ min: 3, max: 5 }),
      fc.constantFrom("", "ts", " python", "  ", " x ```", "~"),
    )
    .map(([indent, char, length, info]) => `${indent}${char.repeat(length)}${info}`);
  const otherLine = fc.constantFrom(
    "",
    "code",
    "``not a fence",
    "| a | b |",
    "|---|---|",
    "😀 done",
    "- item",
  );
  const line = fc.oneof(fenceLine, otherLine);
  const terminator = fc.constantFrom("\n", "\n", "\n", "\r\n", "\r", "\u2028");
  const markdown = fc
    .array(fc.tuple(line, terminator), { maxLength: 60 })
    .map((lines) => lines.flat().join(""));

  /** What happens to the answer between two beats. */
  const change = fc.oneof(
    { weight: 8, arbitrary: fc.record({ grow: fc.integer({ min: 1, max: 40 }) }) },
    { weight: 1, arbitrary: fc.record({ cut: fc.double({ min: 0, max: 1, noNaN: true }) }) },
    { weight: 1, arbitrary: fc.constant({ restart: true }) },
    { weight: 1, arbitrary: fc.constant({ replace: true }) },
  );

  it("property: at every beat of a stream chunked at random, gives what openFence gives for the text before the cut", () => {
    fc.assert(
      fc.property(
        markdown,
        markdown,
        fc.array(fc.tuple(change, fc.double({ min: 0, max: 1, noNaN: true })), { maxLength: 80 }),
        fc.integer({ min: 1, max: 80 }),
        (source, other, beats, chars) => {
          const fences = new FenceTracker();
          const tails = new FenceTracker();
          let text = "";
          let taken = 0; // how much of `source` the stream has taken
          for (const [step, where] of beats) {
            if ("grow" in step) {
              text += source.slice(taken, taken + step.grow);
              taken += step.grow;
            } else if ("cut" in step) text = text.slice(0, Math.floor(text.length * step.cut));
            else if ("restart" in step) text = "";
            else text = other.slice(0, text.length);
            // Any cut, before or after the last one; and the preview's own, beat after beat.
            const end = Math.floor(text.length * where);
            expect(fences.openAt(text, end)).toBe(openFence(text.slice(0, end)));
            expect(markdownTail(text, chars, tails)).toEqual(markdownTail(text, chars, new FenceTracker()));
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it("reads a fence line split between two beats as one line", () => {
    const fences = new FenceTracker();
    expect(fences.openAt("intro\n``", 8)).toBeUndefined();
    expect(fences.openAt("intro\n````ts\ncode\n```\n", 20)).toBe("````");
    expect(fences.openAt("intro\n````ts\ncode\n```\n~~~~\n", 25)).toBe("````");
    expect(fences.openAt("intro\n````ts\ncode\n```\n~~~~\n````\nafter", 37)).toBeUndefined();
  });

  it("reads a replaced or restarted text from its start", () => {
    const fences = new FenceTracker();
    expect(fences.openAt("```\ncode\n", 9)).toBe("```");
    expect(fences.openAt("~~~\ncode\nmore\n", 14)).toBe("~~~");
    expect(fences.openAt("plain\n", 6)).toBeUndefined();
    expect(fences.openAt("plain\n```\n", 3)).toBeUndefined();
  });
});

describe("grewFrom", () => {
  it("says whether a text starts with an earlier one, as startsWith does", () => {
    const answer = `${"😀 some text\n".repeat(20)}more`;
    expect(grewFrom(answer, answer.slice(0, 100))).toBe(true);
    expect(grewFrom(answer, "")).toBe(true);
    expect(grewFrom(answer, answer)).toBe(true);
    expect(grewFrom(answer.slice(0, 100), answer)).toBe(false);
    expect(grewFrom(answer, `x${answer.slice(1, 100)}`)).toBe(false);
  });
});
