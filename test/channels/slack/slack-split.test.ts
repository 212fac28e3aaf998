import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { markdownToMrkdwn } from "../../../src/channels/slack/slack-markdown.js";
import { countFences, splitMrkdwn, splitParts } from "../../../src/channels/slack/slack-split.js";

/** Text without backticks (so fences come only from the generated code blocks). */
const prose = fc.string({
  unit: fc.constantFrom("a", "b", " ", "\n", "&", "<", ">", "é", "😀", "*", "_"),
  maxLength: 400,
});
const word = fc.string({ unit: fc.constantFrom("x", "y", "z", "1", " "), minLength: 1, maxLength: 60 });
const codeBlock = fc
  .array(fc.string({ unit: fc.constantFrom("c", "d", " ", "\n", "&", "<", "{", "}"), maxLength: 300 }), {
    maxLength: 3,
  })
  .map((lines) => "```\n" + lines.join("\n") + "\n```");
const link = word.map((w) => `<https://example.com/${w.trim() || "p"}|${w}>`);
const documentArb = fc
  .array(fc.oneof(prose, codeBlock, link, word), { maxLength: 25 })
  .map((parts) => parts.join("\n\n"));

describe("splitMrkdwn", () => {
  it("never exceeds the limit, keeps all text in order and balances every chunk's fences", () => {
    fc.assert(
      fc.property(documentArb, fc.integer({ min: 16, max: 600 }), (text, limit) => {
        const parts = splitParts(text, limit);
        expect(parts.map((p) => p.body).join("")).toBe(text);
        for (const part of parts) {
          const chunk = part.prefix + part.body + part.suffix;
          expect(chunk.length).toBeLessThanOrEqual(limit);
          expect(countFences(chunk) % 2).toBe(0);
          expect(part.body.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 400 },
    );
  });

  it("keeps converted markdown within the limit with balanced fences", () => {
    const md = fc
      .array(
        fc.oneof(
          fc.constant("# Title"),
          fc.constant("- item **bold**\n- two `code`"),
          fc.constant("```js\n" + "const x = a < b && c;\n".repeat(20) + "```"),
          fc.constant("```md\nExample:\n```js\nnested\n```\n````"),
          fc.constant("[a link](https://example.com/?q=1&r=2)"),
          prose,
        ),
        { maxLength: 30 },
      )
      .map((parts) => parts.join("\n\n"));
    fc.assert(
      fc.property(md, fc.integer({ min: 40, max: 3000 }), (markdown, limit) => {
        const mrkdwn = markdownToMrkdwn(markdown);
        const chunks = splitMrkdwn(mrkdwn, limit);
        for (const chunk of chunks) {
          expect(chunk.length).toBeLessThanOrEqual(limit);
          expect(countFences(chunk) % 2).toBe(0);
        }
        expect(
          splitParts(mrkdwn, limit)
            .map((p) => p.body)
            .join(""),
        ).toBe(mrkdwn);
      }),
      { numRuns: 150 },
    );
  });

  it("prefers paragraph boundaries over line and word boundaries", () => {
    const para = "word ".repeat(30).trim();
    const text = `${para}\n\n${para}\n\n${para}`;
    const chunks = splitMrkdwn(text, 400);
    expect(chunks[0]).toBe(`${para}\n\n${para}\n\n`);
    expect(chunks[1]).toBe(para);
  });

  it("cuts before a code block rather than inside it", () => {
    const code = "```\n" + "line of code\n".repeat(10) + "```";
    const text = `${"intro ".repeat(20)}\n${code}\ntail`;
    const chunks = splitMrkdwn(text, 200);
    expect(chunks[0]?.includes("```")).toBe(false);
    expect(chunks[1]?.startsWith("```")).toBe(true);
  });

  it("closes and reopens a single code block longer than the limit, cutting at line ends", () => {
    const code = "```\n" + Array.from({ length: 60 }, (_, i) => `line ${i}`).join("\n") + "\n```";
    const chunks = splitMrkdwn(code, 120);
    expect(chunks.length).toBeGreaterThan(3);
    for (const chunk of chunks) {
      expect(chunk.startsWith("```")).toBe(true);
      expect(chunk.endsWith("```")).toBe(true);
      expect(chunk.length).toBeLessThanOrEqual(120);
    }
    expect(chunks[1]?.startsWith("```\nline")).toBe(true);
  });

  it("never cuts inside an entity, a link or a surrogate pair", () => {
    const text = `${"&amp;".repeat(10)}<https://example.com/a|label>${"😀".repeat(20)}`;
    for (let limit = 40; limit < 90; limit += 1) {
      for (const part of splitParts(text, limit)) {
        expect(part.body.startsWith("amp;")).toBe(false);
        expect(/^[^<]*>/.test(part.body) && part.body.length < text.length).toBe(false);
        expect(part.body.charCodeAt(0) >= 0xdc00 && part.body.charCodeAt(0) <= 0xdfff).toBe(false);
      }
    }
  });

  it("splits a long line of links between links, reading the line once", () => {
    // 2,000,000 characters, a model's longest answer: a line end looked up afresh at each `<`
    // read the rest of the line, several seconds here.
    const text = "<a> ".repeat(500_000);
    const parts = splitParts(text, 3000);
    expect(parts.map((p) => p.body).join("")).toBe(text);
    for (const part of parts) {
      expect(part.body.length).toBeLessThanOrEqual(3000);
      expect(part.body.startsWith("<a> ")).toBe(true);
    }
  });

  it("returns nothing for empty text and rejects absurd limits", () => {
    expect(splitMrkdwn("", 100)).toEqual([]);
    expect(() => splitMrkdwn("abc", 3)).toThrow(RangeError);
  });
});
