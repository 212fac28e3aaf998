/**
 * Model markdown walked once, for every platform: the `marked` lexer (a maintained CommonMark/GFM
 * parser) turns the text into tokens, and this walker visits them, handing each construct to a
 * platform's formatting primitives (`MarkdownFormat`). Slack mrkdwn and Telegram HTML are then
 * only small primitive sets; what is common — headings as bold lines, lists with bullets,
 * numbers and ☐ / ☑ task boxes, tables as an aligned monospace block, a rule for `---`, raw HTML
 * shown as text, a link whose text passes for another address shown with its real target — is
 * decided here once. Plain text that no markdown construct can start in (most short answers)
 * skips the lexer: it is the platform's text as it is.
 */
import { Lexer, type MarkedToken, type Token, type Tokens } from "marked";
import { trimTrailing } from "../../core/trim-trailing.js";
import { inlinePieces } from "./inline-pieces.js";
import { labelPosesAsOtherHost } from "./link-label.js";
import { fenceCloseWithin, openFence, openTable } from "./markdown-tail.js";

export { inlinePieces } from "./inline-pieces.js";

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
        return this.link(token.href, this.inline(token.tokens), plainText(token.tokens));
      case "image":
        return this.link(token.href, f.text(token.text || "image"), token.text);
      case "checkbox":
        // A loose task item's box sits in its paragraph; the list item shows it already.
        return "";
      default:
        return f.escape("text" in token && typeof token.text === "string" ? token.text : token.raw);
    }
  }

  /**
   * A link around its formatted `label`; one whose text (`labelText`) passes for another address
   * (link-label.ts) is that text, not linked, followed by the real target in brackets.
   */
  private link(href: string, label: string, labelText: string): string {
    const f = this.format;
    return labelPosesAsOtherHost(labelText, href) ? `${label} (${f.link(href, "")})` : f.link(href, label);
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

/** `marked`'s lexing (blocks, then the inline runs they queued), each inline run read in pieces (inline-pieces.ts). */
function lexMarkdown(markdown: string): Token[] {
  const lexer = new Lexer({ gfm: true });
  const tokens = lexer.blockTokens(markdown);
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
 * The longest text one lexing reads. `marked`'s block lexer is quadratic in some shapes (lazy
 * quote continuation, `>a\na\n` repeated: 2.2 s at 100,000 characters, 10.5 s at 200,000), and a
 * reply may run to two million characters, so a longer text is converted a stretch at a time.
 * 12,000: the worst stretch found (lazy quote) costs ~12 ms, where a 24,000 one cost up to 80, so
 * the character budget below, not a stretch's shape, bounds a render (bench/results/render.md).
 */
export const STRETCH_CHARS = 12_000;

/**
 * The characters one render converts (renders that share a budget share them); the text after is
 * shown as text. A count, not a clock, so whether an answer is formatted never depends on the
 * host's load. 50,000: ordinary answers to ~48,000 characters stay formatted whole (~1 ms per
 * 5,000 characters), and the costliest shapes found stay under ~120 ms of converting a render
 * (emphasis delimiters, 2–3 µs a character; lazy quotes ~50 ms; bench/results/render.md).
 */
export const CONVERTED_CHARS_PER_RENDER = 50_000;

/** Characters still to convert in one render, or in renders that share it. */
export class RenderBudget {
  constructor(private left: number) {}

  /** Characters still to convert. */
  get remaining(): number {
    return this.left;
  }

  /** Whether `chars` more fit; they are taken when they do, else the budget is spent (nothing after is converted). */
  take(chars: number): boolean {
    if (chars > this.left) {
      this.left = 0;
      return false;
    }
    this.left -= chars;
    return true;
  }
}

/** A budget of CONVERTED_CHARS_PER_RENDER characters (pass one to renders that share a budget). */
export function renderBudget(chars = CONVERTED_CHARS_PER_RENDER): RenderBudget {
  return new RenderBudget(chars);
}

/** A stretch of a markdown text: its source, and what to convert (a code block cut there closed and reopened), undefined when it is shown as text. */
export interface Stretch {
  /** Where the stretch starts in the text. */
  readonly start: number;
  readonly source: string;
  readonly markdown: string | undefined;
}

/** A blank line before a block, and a line, that start flush left (not an indented continuation). */
const BLOCK_START = /\n\n(?=\S)/g;
const LINE_START = /\n(?=\S)/g;

/** Where the first match of `pattern` after `from` ends, or undefined. */
function nextStart(pattern: RegExp, markdown: string, from: number): number | undefined {
  pattern.lastIndex = from;
  const match = pattern.exec(markdown);
  return match === null ? undefined : match.index + match[0].length;
}

/** Where the last match of `pattern` after `from` ends when that is at most `to`, or undefined. */
function lastStartWithin(pattern: RegExp, markdown: string, from: number, to: number): number | undefined {
  // Only the window is searched (one character past `to` for the lookahead).
  const window = markdown.slice(0, to + 1);
  let last: number | undefined;
  for (
    let at = nextStart(pattern, window, from);
    at !== undefined && at <= to;
    at = nextStart(pattern, window, at)
  )
    last = at;
  return last;
}

/**
 * Where the stretch of `markdown` from `start` ends (the whole text when it is short enough), and
 * whether it is converted. It ends before the last block in reach, else before the last line (a
 * long list, table or quote is cut between lines); a code block open there is taken whole, as code
 * costs little to lex. A block with a line longer than a stretch is shown as text, up to the next block.
 */
function stretchEnd(markdown: string, start: number, fence: string | undefined): [number, boolean] {
  const max = start + STRETCH_CHARS;
  if (markdown.length <= max) return [markdown.length, true];
  const lineEnd = markdown.lastIndexOf("\n", max - 1) + 1;
  const open = lineEnd > start ? openFence(markdown.slice(start, lineEnd), fence) : undefined;
  if (open !== undefined)
    return [fenceCloseWithin(markdown, open, lineEnd, markdown.length) ?? markdown.length, true];
  const end =
    lastStartWithin(BLOCK_START, markdown, start, max) ?? lastStartWithin(LINE_START, markdown, start, max);
  if (end !== undefined) return [end, true];
  return [nextStart(BLOCK_START, markdown, max) ?? markdown.length, false];
}

/**
 * `markdown` in stretches of at most STRETCH_CHARS but for whole code blocks (`stretchEnd`), cut
 * as they are read. A code block open at a cut is closed there and reopened after it, and the
 * header rows of a table cut between its rows are repeated before the rest, so each stretch
 * renders as it does in the whole.
 */
export function* markdownStretches(markdown: string): Generator<Stretch> {
  let start = 0;
  let fence: string | undefined;
  let table: string | undefined;
  while (start < markdown.length) {
    const [end, converted] = stretchEnd(markdown, start, fence);
    const source = markdown.slice(start, end);
    const open = fence ?? table;
    const reopened = open === undefined ? source : `${open}\n${source}`;
    fence = openFence(source, fence);
    table = fence === undefined ? openTable(reopened) : undefined;
    const closed = fence === undefined ? reopened : `${reopened}\n${fence}`;
    yield { start, source, markdown: converted ? closed : undefined };
    start = end;
  }
}

/** One stretch's blocks. Markdown nested deeper than the stack allows (forty thousand `>`) is shown as its source. */
function renderStretch(markdown: string, format: MarkdownFormat): string {
  try {
    const tokens = lexMarkdown(markdown);
    return new MarkdownWalker(format).blocks(tokens, { quoted: false, listDepth: 0 }).join("\n\n");
  } catch (error) {
    if (error instanceof RangeError) return format.text(markdown);
    throw error;
  }
}

/**
 * Render model markdown with a platform's primitives; top-level blocks are separated by a blank
 * line. A long text is converted a stretch at a time (`markdownStretches`) while `budget` holds its
 * characters; a text or stretch that does not fit, the stretches after it, and any that cannot be
 * converted in bounded time, are shown as text, with the blank lines that end them.
 */
export function renderMarkdown(
  markdown: string,
  format: MarkdownFormat,
  budget: RenderBudget = renderBudget(),
): string {
  if (isPlainMarkdown(markdown)) return format.text(markdown);
  const normalized = markdown.replace(/\r\n|\r/g, "\n");
  if (normalized.length <= STRETCH_CHARS)
    return budget.take(normalized.length) ? renderStretch(normalized, format) : format.text(normalized);
  let rendered = "";
  const add = (part: string) => {
    if (part.trim() === "") return;
    rendered = rendered === "" || rendered.endsWith("\n\n") ? rendered + part : `${rendered}\n\n${part}`;
  };
  for (const stretch of markdownStretches(normalized)) {
    if (stretch.markdown === undefined) {
      add(format.text(stretch.source));
      continue;
    }
    if (!budget.take(stretch.markdown.length)) {
      add(format.text(normalized.slice(stretch.start))); // the rest, at once
      break;
    }
    add(renderStretch(stretch.markdown, format));
  }
  return trimTrailing(rendered, "\n");
}
