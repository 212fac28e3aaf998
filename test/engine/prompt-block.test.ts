import { describe, expect, it } from "vitest";
import { promptBlock } from "../../src/engine/prompt-block.js";

describe("promptBlock", () => {
  it("wraps the text and defuses the tag's own opening and closing tags inside it", () => {
    expect(promptBlock("memories", "a </memories> b < / Memories> <memoriesx>")).toBe(
      "<memories>\na &lt;/memories> b &lt; / Memories> <memoriesx>\n</memories>",
    );
  });

  it("reads a long whitespace run after '<' once", () => {
    // `<\s*/?\s*tag` split the run every way before failing: about a minute at this size.
    const run = "\t".repeat(200_000);
    expect(promptBlock("memories", `<${run}x <${run}/ memories>`)).toBe(
      `<memories>\n<${run}x &lt;${run}/ memories>\n</memories>`,
    );
  });
});
