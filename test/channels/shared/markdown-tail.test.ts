import { describe, expect, it } from "vitest";
import { markdownTail } from "../../../src/channels/shared/markdown-tail.js";

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
