/**
 * Model markdown walked once, for every platform: the `marked` lexer (a maintained CommonMark/GFM
 * parser) turns the text into tokens, and this walker visits them, handing each construct to a
 * platform's formatting primitives (`MarkdownFormat`). Slack mrkdwn and Telegram HTML are then
 * only small primitive sets; what is common — headings as bold lines, lists with bullets,
 * numbers and ☐ / ☑ task boxes, tables as an aligned monospace block, a rule for `---`, raw HTML
 * shown as text — is decided here once. Plain text that no markdown construct can start in (most
 * short answers) skips the lexer: it is the platform's text as it is.
 */
import { Lexer, type MarkedToken, type Token, type Tokens } from "marked";
import { cutBeforeCharacter } from "../../core/surrogate-pairs.js";
import { trimTrailing } from "../../core/trim-trailing.js";

/** Where a block stands: inside a quote (some platforms cannot nest them), and how deep in lists. */
export interface MarkdownContext {
  readonly quoted: boolean;
  readonly listDepth: number;
}

/** A platform's formatting primitives; every string argument but raw text is already formatted. */
export interface MarkdownFormat {
  /** Source text shown as text (escaped for the platform, character references resolved or not). */
  text(text: string): string;
  /** Literal characters shown as they are (backslash escapes, inline raw HTML). */
  escape(text: string): string;
  /** A block of raw HTML, shown as text. */
  htmlBlock(html: string): string;
  strong(inner: string): string;
  em(inner: string): string;
  del(inner: string): string;
  /** Inline code from its source text. */
  code(text: string): string;
  /** A link around a formatted label (empty for `<https://…>` autolinks without text). */
  link(href: string, label: string): string;
  /** A code block from its source text (trailing newlines removed) and the fence's first word. */
  pre(code: string, language: string, context: MarkdownContext): string;
  /** A block quote around its rendered blocks. */
  quote(blocks: readonly string[], context: MarkdownContext): string;
  /** The marker of an unordered list item at this depth (0 is the outermost list). */
  bullet(depth: number): string;
  /** One list item: its marker (bullet or "3.") and its rendered body, possibly several lines. */
  listItem(marker: string, body: string, depth: number): string;
  /** What separates a list's items (loose lists have blank lines between them). */
  listSeparator(loose: boolean): string;
  /** The plain text of a table cell, from its tokens (`inline` renders them with this format). */
  tableCell(tokens: readonly Token[], inline: (tokens: readonly Token[]) => string): string;
  /** A table, given as aligned monospace text, or as its markdown source where that is better. */
  table(aligned: string, context: MarkdownContext, source: string): string;
}

/** What `---` becomes everywhere. */
const RULE = "──────────";

/** The text of inline tokens without any formatting (raw source text, `<br>` as a space). */
export function plainText(tokens: readonly Token[] | undefined): string {
  if (!tokens) return "";
  return tokens
    .map((token) => {
      const t = token as Tokens.Generic;
      if (t.tokens) return plainText(t.tokens);
      if (t.type === "br") return " ";
      return typeof t.text === "string" ? t.text : "";
    })
    .join("");
}

/** Rows of cells as an aligned monospace block: columns padded, " | " between, a "-+-" rule. */
function alignTable(rows: readonly (readonly string[])[]): string {
  const columns = rows[0]?.length ?? 0;
  const widths = Array.from({ length: columns }, (_, col) =>
    Math.max(...rows.map((row) => (row[col] ?? "").length)),
  );
  const line = (row: readonly string[]) =>
    row
      .map((value, col) => value.padEnd(widths[col] ?? 0))
      .join(" | ")
      .trimEnd();
  const rule = widths.map((width) => "-".repeat(Math.max(width, 1))).join("-+-");
  const [header = [], ...body] = rows;
  return [line(header), rule, ...body.map(line)].join("\n");
}

/** Walks one markdown text with one format. */
class MarkdownWalker {
  constructor(private readonly format: MarkdownFormat) {}

  readonly inline = (tokens: readonly Token[] | undefined): string =>
    (tokens ?? []).map((token) => this.inlineToken(token as MarkedToken)).join("");

  blocks(tokens: readonly Token[], context: MarkdownContext): string[] {
    return tokens.map((token) => this.block(token as MarkedToken, context)).filter((part) => part !== "");
  }

  private inlineToken(token: MarkedToken): string {
    const f = this.format;
    switch (token.type) {
      case "text":
        return token.tokens ? this.inline(token.tokens) : f.text(token.text);
      case "escape":
      case "html":
        return f.escape(token.text);
      case "strong":
        return f.strong(this.inline(token.tokens));
      case "em":
        return f.em(this.inline(token.tokens));
      case "del":
        return f.del(this.inline(token.tokens));
      case "codespan":
        return f.code(token.text);
      case "br":
        return "\n";
      case "link":
        return f.link(token.href, this.inline(token.tokens));
      case "image":
        return f.link(token.href, f.text(token.text || "image"));
      case "checkbox":
        // A loose task item's box sits in its paragraph; the list item shows it already.
        return "";
      default:
        return f.escape("text" in token && typeof token.text === "string" ? token.text : token.raw);
    }
  }

  private block(token: MarkedToken, context: MarkdownContext): string {
    const f = this.format;
    switch (token.type) {
      case "space":
      case "def":
      case "checkbox":
        return "";
      case "heading":
        return f.strong(this.inline(token.tokens));
      case "paragraph":
        return this.inline(token.tokens);
      case "text":
        return token.tokens ? this.inline(token.tokens) : f.text(token.text);
      case "code":
        return f.pre(trimTrailing(token.text, "\n"), firstWord(token.lang), context);
      case "blockquote":
        return f.quote(this.blocks(token.tokens, { ...context, quoted: true }), context);
      case "list":
        return this.list(token, context);
      case "table":
        return this.table(token, context);
      case "hr":
        return RULE;
      case "html":
        return f.htmlBlock(token.text);
      default:
        return f.escape(token.raw.trimEnd());
    }
  }

  private list(token: Tokens.List, context: MarkdownContext): string {
    const f = this.format;
    const depth = context.listDepth;
    const start = typeof token.start === "number" ? token.start : 1;
    const inner = { ...context, listDepth: depth + 1 };
    return token.items
      .map((item, index) => {
        const marker = token.ordered ? `${start + index}.` : f.bullet(depth);
        const box = item.task ? (item.checked ? "☑ " : "☐ ") : "";
        // A nested list goes one level deeper; other blocks (a quote holding a list) keep the item's.
        const body = item.tokens
          .filter((child) => child.type !== "checkbox")
          .map((child) => this.block(child as MarkedToken, child.type === "list" ? inner : context))
          .filter((part) => part !== "")
          .join("\n");
        return f.listItem(marker, box + body, depth);
      })
      .join(f.listSeparator(token.loose));
  }

  private table(token: Tokens.Table, context: MarkdownContext): string {
    const rows = [token.header, ...token.rows].map((row) =>
      row.map((cell) => this.format.tableCell(cell.tokens, this.inline)),
    );
    return this.format.table(alignTable(rows), context, token.raw.trim());
  }
}

/** The language word of a fence's info string, reduced to characters safe in a class name. */
function firstWord(info: string | undefined): string {
  return (
    (info ?? "")
      .trim()
      .split(/\s+/)[0]
      ?.replace(/[^\w+#.-]/g, "") ?? ""
  );
}

/**
 * Lines of letters, digits, single spaces inside and plain punctuation, each starting with a letter
 * and ending without a space: no block construct (lists, headings, quotes, code, tables, HTML)
 * starts on such a line, no inline one (emphasis, code, links, autolinks, references, escapes,
 * hard breaks) is in it — save GFM's `www.` autolinks, ruled out separately.
 */
const PLAIN_LINE = /^\p{L}(?:[\p{L}\p{N} ,.;:'"?!]*[\p{L}\p{N},.;:'"?!])?$/u;

/** Whether `markdown` is plain text to every markdown parser: one paragraph of such lines. */
export function isPlainMarkdown(markdown: string): boolean {
  if (/www\./i.test(markdown)) return false;
  return markdown.split("\n").every((line) => PLAIN_LINE.test(line));
}

/**
 * The longest run of text one inline pass of `marked` reads. Its emphasis search is quadratic in
 * the run (40,000 characters of `_a` took two seconds, and a model's reply may be far longer), so
 * a longer paragraph is read in pieces cut at a line end, else at a space: emphasis that spans a
 * cut in a paragraph this long shows its markers as text.
 */
const INLINE_PIECE = 2_000;

/** `text` cut into pieces of at most INLINE_PIECE characters, each ending at a line end or space where one is near. */
export function inlinePieces(text: string): string[] {
  const pieces: string[] = [];
  let start = 0;
  while (text.length - start > INLINE_PIECE) {
    const limit = start + INLINE_PIECE;
    let cut = text.lastIndexOf("\n", limit - 1) + 1;
    if (cut <= start) cut = text.lastIndexOf(" ", limit - 1) + 1;
    if (cut <= start) cut = cutBeforeCharacter(text, limit);
    pieces.push(text.slice(start, cut));
    start = cut;
  }
  pieces.push(text.slice(start));
  return pieces;
}

/** `marked`'s lexing (blocks, then the inline runs they queued), with each inline run read in pieces. */
function lexMarkdown(markdown: string): Token[] {
  const lexer = new Lexer({ gfm: true });
  const tokens = lexer.blockTokens(markdown.replace(/\r\n|\r/g, "\n"));
  for (const run of lexer.inlineQueue) {
    for (const piece of inlinePieces(run.src)) {
      lexer.state.inRawBlock = false;
      lexer.inlineTokens(piece, run.tokens);
    }
  }
  lexer.inlineQueue = [];
  return tokens;
}

/**
 * Render model markdown with a platform's primitives; top-level blocks are separated by a blank
 * line. Markdown nested deeper than the stack allows (forty thousand `>`) is shown as its source.
 */
export function renderMarkdown(markdown: string, format: MarkdownFormat): string {
  if (isPlainMarkdown(markdown)) return format.text(markdown);
  try {
    const tokens = lexMarkdown(markdown);
    return new MarkdownWalker(format).blocks(tokens, { quoted: false, listDepth: 0 }).join("\n\n");
  } catch (error) {
    if (error instanceof RangeError) return format.text(markdown);
    throw error;
  }
}
