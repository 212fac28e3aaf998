import { describe, expect, it } from "vitest";
import {
  blockBoundary,
  fenceCloseWithin,
  markdownTail,
  openFence,
  openTable,
} from "../../../src/channels/shared/markdown-tail.js";

describe("markdownTail", () => {
  it("gives back a short answer whole", () => {
    expect(markdownTail("# Title\n\nbody", 100)).toEqual({ text: "# Title\n\nbody", cut: false });
  });

  it("cuts before the first flush-left block in the last `chars` characters", () => {
    const text = "first paragraph\n\n- item\n  continued\n\n  indented part of the item\n\nlast paragraph";
    // The indented block is a continuation of the list item: the cut goes past it.
    expect(markdownTail(text, 60)).toEqual({ text: "last paragraph", cut: true });
    expect(markdownTail(text, 72)).toEqual({
      text: "- item\n  continued\n\n  indented part of the item\n\nlast paragraph",
      cut: true,
    });
  });

  it("cuts at a flush-left line when no blank line is near, else between whole characters", () => {
    expect(markdownTail(`${"a line\n".repeat(10)}end`, 12)).toEqual({ text: "a line\nend", cut: true });
    expect(markdownTail("😀".repeat(10), 5)).toEqual({ text: "😀😀", cut: true });
  });

  it("reopens a code fence open at the cut, with its own marker", () => {
    const code = `intro\n\n~~~~python\n${"x = 1\n\n".repeat(20)}~~~~\n`;
    expect(markdownTail(`${code}\n${"y\n".repeat(30)}`, 20).text.startsWith("~~~~")).toBe(false);
    const open = `intro\n\n\`\`\`\`ts\n\`\`\`\nstill code\n\n${"const x = 1;\n\n".repeat(20)}`;
    const tail = markdownTail(open, 30);
    expect(tail.text.startsWith("````\nconst x = 1;")).toBe(true);
    const closed = `\`\`\`ts\ncode\n\`\`\`\n\n${"after\n\n".repeat(20)}`;
    expect(markdownTail(closed, 20).text.startsWith("after")).toBe(true);
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
    const tail = markdownTail(`Intro\n\n| name | n |\n|---|---|\n${rows}\n`, 60);
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
