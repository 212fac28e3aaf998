/**
 * HTML conversion of hostile pages: HTML the parser handles in quadratic time is converted in a
 * worker thread, never on the event loop every chat runs on, and given up when it runs too long.
 */
import { describe, expect, it } from "vitest";
import { htmlToMarkdown } from "../../src/tools/web/html-to-markdown.js";

/** Unclosed nested elements: the HTML parser's cost grows with the square of their count. */
const deepPage = (count: number) => `<html><body>${"<div>".repeat(count)}</body></html>`;

describe("htmlToMarkdown on hostile pages", () => {
  it("gives up a conversion that runs past its time limit (one the HTML parser makes quadratic)", async () => {
    await expect(htmlToMarkdown(deepPage(16_000), { timeoutMs: 1000 })).rejects.toThrow(
      "converting the page took too long",
    );
  });

  it("still converts an ordinary page, title apart", async () => {
    const page = await htmlToMarkdown(
      "<html><head><title>T &amp; U</title></head><body><p>Hi</p></body></html>",
    );
    expect(page).toEqual({ title: "T & U", markdown: "Hi" });
  });
});
