/**
 * Inline pieces (shared/inline-pieces.ts): a long paragraph is lexed in pieces so marked's
 * emphasis search stays cheap, and the cuts never change what ordinary text renders — no cut in a
 * code span, a link or a hard break; delimiters inside code count for nothing; hostile text still
 * comes out in bounded pieces.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { INLINE_PIECE, PIECE_DELIMITERS } from "../../../src/channels/shared/inline-pieces.js";
import {
  inlinePieces,
  type MarkdownFormat,
  renderBudget,
  renderMarkdown,
  STRETCH_CHARS,
} from "../../../src/channels/shared/markdown-walk.js";
import { markdownToMrkdwn } from "../../../src/channels/slack/slack-markdown.js";
import { markdownToTelegramHtml } from "../../../src/channels/telegram/telegram-html.js";

/** A format that shows which primitive produced what. */
const PROBE: MarkdownFormat = {
  text: (text) => text,
  escape: (text) => `{${text}}`,
  htmlBlock: (html) => `H(${html})`,
  strong: (inner) => `B(${inner})`,
  em: (inner) => `I(${inner})`,
  del: (inner) => `S(${inner})`,
  code: (text) => `C(${text})`,
  link: (href, label) => `L(${href}|${label})`,
  pre: (code) => `P(${code})`,
  quote: (blocks) => `Q(${blocks.join("/")})`,
  bullet: () => "*",
  listItem: (marker, body) => `${marker} ${body}`,
  listSeparator: () => "\n",
  tableCell: (tokens, inline) => inline(tokens),
  table: (aligned) => `T(${aligned})`,
};

/** Delimiters (`*`, `_`) in `items`, each of which renders alone in one piece. */
const delimiters = (items: readonly string[]) => items.join("").replace(/[^*_]/g, "").length;

/** `items` joined by `separator` renders as its items rendered one by one, joined the same way. */
function expectRendersAsItems(items: readonly string[], separator: string) {
  const paragraph = items.join(separator);
  expect(renderMarkdown(paragraph, PROBE)).toBe(
    items.map((item) => renderMarkdown(item, PROBE)).join(separator),
  );
}

describe("inline pieces keep code spans whole", () => {
  // 25 commands with spaces and underscores, 150 delimiters inside code, 913 characters.
  const commands = Array.from({ length: 25 }, (_, i) => `run my_script${i} --flag_a --flag_b`);
  const paragraph = commands.map((command) => `\`${command}\``).join(", ");

  it("renders a paragraph of 25 code spans as 25 code spans on Telegram and Slack", () => {
    expect(paragraph).toHaveLength(913);
    expect(delimiters([paragraph])).toBeGreaterThan(PIECE_DELIMITERS);
    const html = markdownToTelegramHtml(paragraph);
    expect(html.match(/<code>/g)).toHaveLength(25);
    expect(html).toBe(commands.map((command) => `<code>${command}</code>`).join(", "));
    expect(markdownToMrkdwn(paragraph)).toBe(paragraph);
    expectRendersAsItems(
      commands.map((command) => `\`${command}\``),
      ", ",
    );
  });

  it("counts nothing inside code spans, of any backtick length", () => {
    expect(inlinePieces(paragraph)).toEqual([paragraph]);
    const starred = Array.from({ length: 40 }, (_, i) => `\`\`a*b_c \` d*${i}\`\``).join(" and ");
    expect(inlinePieces(starred)).toEqual([starred]);
    expect(renderMarkdown(starred, PROBE)).toBe(
      Array.from({ length: 40 }, (_, i) => `C(a*b_c \` d*${i})`).join(" and "),
    );
  });

  it("never cuts inside a code span, even past the character limit", () => {
    const spans = Array.from({ length: 120 }, (_, i) => `\`cmd ${i} --x y\``).join(" then ");
    expect(spans.length).toBeGreaterThan(INLINE_PIECE);
    expectRendersAsItems(
      Array.from({ length: 120 }, (_, i) => `\`cmd ${i} --x y\``),
      " then ",
    );
    const long = `\`${"a b ".repeat(1_000)}\``;
    const text = `${"!*a".repeat(10)} ${long} ${"!*a".repeat(100)}`;
    const pieces = inlinePieces(text);
    expect(pieces.join("")).toBe(text);
    expect(pieces.some((piece) => piece.includes(long))).toBe(true);
  });

  it("reads unmatched backticks as text: they do not stop cuts", () => {
    const text = `a \`\`\` b ${"!*a ".repeat(400)}`;
    const pieces = inlinePieces(text);
    expect(pieces.join("")).toBe(text);
    expect(pieces.length).toBeGreaterThan(400 / PIECE_DELIMITERS);
  });

  it("keeps hostile text in bounded pieces whatever its backticks", () => {
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.constantFrom("a", " ", "\n", "*", "_", "`", "``", "\\", "["),
          maxLength: 9_000,
        }),
        (text) => {
          const pieces = inlinePieces(text);
          expect(pieces.join("")).toBe(text);
          for (const piece of pieces)
            if (piece.length > INLINE_PIECE) expect(piece).toMatch(/^(`+)[^`][\s\S]*[^`]\1$/); // one code span
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe("inline pieces keep emphasis and links of ordinary prose", () => {
  it("formats prose with more emphasis delimiters than one piece holds", () => {
    // Two delimiters first, so the piece's limit falls inside a bold phrase.
    const items = ["*intro*", ...Array.from({ length: 40 }, (_, i) => `**step ${i} done** then *word*`)];
    expect(delimiters(items)).toBeGreaterThan(2 * PIECE_DELIMITERS);
    expectRendersAsItems(items, " ");
    expect(renderMarkdown(items.join(" "), PROBE).match(/B\(step \d+ done\)/g)).toHaveLength(40);
  });

  it("does not cut a link's text or destination", () => {
    const items = Array.from(
      { length: 50 },
      (_, i) => `[read *this* part ${i}](https://x.example/a_b "the title")`,
    );
    expectRendersAsItems(items, " ");
    expect(renderMarkdown(items.join(" "), PROBE).match(/L\(/g)).toHaveLength(50);
  });

  it("keeps a hard break with its line end", () => {
    const text = Array.from({ length: 40 }, (_, i) => `*line* ${i}`).join("  \n");
    expect(delimiters([text])).toBeGreaterThan(PIECE_DELIMITERS);
    // Each break renders as a line end, as it does in a text too short to be cut.
    expect(renderMarkdown(text, PROBE)).toBe(Array.from({ length: 40 }, (_, i) => `I(line) ${i}`).join("\n"));
  });
});

describe("CRLF text", () => {
  const lf = "a line\n*b* `c`\n\n- item";
  const crlf = lf.replace(/\n/g, "\r\n");

  it("renders as its LF text, converted or shown as text, short or long", () => {
    expect(renderMarkdown(crlf, PROBE)).toBe(renderMarkdown(lf, PROBE));
    expect(renderMarkdown(crlf, PROBE, renderBudget(0))).toBe(renderMarkdown(lf, PROBE, renderBudget(0)));
    expect(renderMarkdown(crlf, PROBE, renderBudget(0))).not.toContain("\r");
    const longLf = `${lf}\n\n`.repeat(Math.ceil(STRETCH_CHARS / lf.length));
    const longCrlf = longLf.replace(/\n/g, "\r\n");
    expect(longCrlf.length).toBeGreaterThan(STRETCH_CHARS);
    expect(renderMarkdown(longCrlf, PROBE, renderBudget(0))).toBe(
      renderMarkdown(longLf, PROBE, renderBudget(0)),
    );
  });
});
