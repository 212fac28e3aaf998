import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { htmlToPlainText, markdownToTelegramHtml } from "../../../src/channels/telegram/telegram-html.js";
import { splitTelegramHtml, TELEGRAM_TEXT_LIMIT } from "../../../src/channels/telegram/telegram-split.js";
import { parseTelegramHtml } from "../../fakes/fake-telegram/html-parser.js";

function visible(chunk: string): string {
  const parsed = parseTelegramHtml(chunk);
  if (!parsed.ok) throw new Error(`${parsed.description}\n${chunk}`);
  return parsed.text;
}

const squash = (text: string) => text.replace(/\s+/g, "");

describe("splitTelegramHtml", () => {
  it("keeps short messages whole", () => {
    expect(splitTelegramHtml("<b>hi</b> there")).toEqual(["<b>hi</b> there"]);
    expect(splitTelegramHtml("  \n ")).toEqual([]);
    expect(splitTelegramHtml(" plain &amp; short\n")).toEqual(["plain &amp; short"]);
  });

  it("property: text without tags that fits is split as it would be with tags", () => {
    const text = fc.string({
      unit: fc.constantFrom("a", " ", "\n", "&amp;", "&#39;", "é", "😀"),
      maxLength: 60,
    });
    fc.assert(
      fc.property(text, (html) => {
        expect(splitTelegramHtml(html, 40)).toEqual(splitTelegramHtml(`<i></i>${html}`, 40));
      }),
    );
  });

  it("cuts at paragraph boundaries first", () => {
    const paragraph = (letter: string) => letter.repeat(30);
    const html = [paragraph("a"), paragraph("b"), paragraph("c")].join("\n\n");
    expect(splitTelegramHtml(html, 70)).toEqual([`${paragraph("a")}\n\n${paragraph("b")}`, paragraph("c")]);
  });

  it("closes and reopens a code block cut at a line end", () => {
    const lines = Array.from({ length: 10 }, (_, i) => `line ${i} &lt;x&gt;`);
    const html = `<pre><code class="language-py">${lines.join("\n")}</code></pre>`;
    const chunks = splitTelegramHtml(html, 60);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      expect(chunk.startsWith('<pre><code class="language-py">')).toBe(true);
      expect(chunk.endsWith("</code></pre>")).toBe(true);
      expect(visible(chunk).length).toBeLessThanOrEqual(60);
    }
    expect(chunks.map(visible).join("\n")).toBe(htmlToPlainText(html));
  });

  it("never cuts inside an entity or a surrogate pair", () => {
    const html = "&amp;".repeat(50) + "😀".repeat(50);
    for (const chunk of splitTelegramHtml(html, 7)) {
      const text = visible(chunk);
      expect(text.length).toBeLessThanOrEqual(7);
      expect(text).not.toMatch(/[\uD800-\uDBFF]$/);
    }
  });

  it("splits a 10,000-character answer into ordered chunks within the limit", () => {
    const markdown = Array.from(
      { length: 100 },
      (_, i) => `Paragraph ${i}: ${"word ".repeat(18).trim()}`,
    ).join("\n\n");
    const html = markdownToTelegramHtml(markdown);
    const chunks = splitTelegramHtml(html);
    expect(markdown.length).toBeGreaterThan(10_000);
    expect(chunks.length).toBe(3);
    expect(chunks.every((chunk) => visible(chunk).length <= TELEGRAM_TEXT_LIMIT)).toBe(true);
    expect(chunks.map(visible).join("\n\n")).toBe(htmlToPlainText(html));
  });

  const inline = fc.oneof(
    fc
      .stringMatching(/^[a-z &<>"\n]{1,40}$/)
      .map((text) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")),
    fc.constantFrom("😀", "\n\n", " ", "\n"),
  );
  const fragment: fc.Arbitrary<string> = fc.letrec<{ node: string }>((tie) => ({
    node: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      inline,
      fc
        .tuple(fc.constantFrom("b", "i", "s", "u"), fc.array(tie("node"), { maxLength: 4 }))
        .map(([tag, children]) => `<${tag}>${children.join("")}</${tag}>`),
      fc
        .array(inline, { maxLength: 4 })
        .map((children) => `<a href="https://x.test/?a=1&amp;b=2">${children.join("")}</a>`),
      fc
        .array(inline, { maxLength: 6 })
        .map((children) => `<pre><code class="language-ts">${children.join("")}</code></pre>`),
    ),
  })).node;
  const document = fc.array(fragment, { maxLength: 30 }).map((parts) => parts.join(""));

  it("property: every chunk is valid Telegram HTML within the limit, and all text is kept in order", () => {
    fc.assert(
      fc.property(document, fc.integer({ min: 2, max: 120 }), (html, limit) => {
        const chunks = splitTelegramHtml(html, limit);
        for (const chunk of chunks) expect(visible(chunk).length).toBeLessThanOrEqual(limit);
        expect(squash(chunks.map(visible).join(""))).toBe(squash(htmlToPlainText(html)));
      }),
      { numRuns: 400 },
    );
  });

  it("property: markdown rendered then split at 4096 stays valid and complete", () => {
    const block = fc.oneof(
      fc.stringMatching(/^[a-z *_`<>&]{1,300}$/),
      fc.stringMatching(/^[a-z <>&\n]{1,2000}$/).map((code) => `\`\`\`js\n${code}\n\`\`\``),
      fc.stringMatching(/^[a-z ]{1,80}$/).map((item) => `- ${item}\n- **${item}**`),
    );
    fc.assert(
      fc.property(fc.array(block, { minLength: 1, maxLength: 12 }), (blocks) => {
        const html = markdownToTelegramHtml(blocks.join("\n\n"));
        const chunks = splitTelegramHtml(html);
        for (const chunk of chunks) expect(visible(chunk).length).toBeLessThanOrEqual(TELEGRAM_TEXT_LIMIT);
        expect(squash(chunks.map(visible).join(""))).toBe(squash(htmlToPlainText(html)));
      }),
      { numRuns: 60 },
    );
  });
});
