/**
 * Cutting a growing markdown answer where its pieces render as the whole does. Rendering the
 * whole answer at every edit made each beat cost more as the answer grew (half a second per beat
 * at two million characters, and quadratic over the stream). Telegram's live preview shows only
 * the answer's last screen (`markdownTail`); Slack's page layout converts the settled start once,
 * a piece at a time (`blockBoundary`, slack-answer-sections.ts). A cut falls at a block boundary,
 * and a code fence open there is reopened (a table's header rows repeated), so each piece renders
 * as it does inside the whole. Which fence is open at the preview's cut is tracked from beat to
 * beat (`FenceTracker`): finding it in the whole answer again cost 1.2 ms a beat at two million
 * characters (bench/results/render.md).
 */

import { cutBetweenCharacters } from "../../core/surrogate-pairs.js";

/** A fence line: up to three spaces, three or more backticks or tildes, then the info string. */
const FENCE_LINE = /^ {0,3}(`{3,}|~{3,})(.*)$/gm;

/** FENCE_LINE tried at the start of a text only: a line that is no fence line is read no further. */
const FENCE_LINE_AT_START = new RegExp(FENCE_LINE.source, "my");

/** Whether a fence line of `marker` and then `rest` closes the code fence opened with `open`. */
function closesFence(open: string, marker: string, rest: string): boolean {
  return marker[0] === open[0] && marker.length >= open.length && rest.trim() === "";
}

/** The fence marker open after a fence line of `marker` and then `rest`, `open` being open before it. */
function afterFenceLine(open: string | undefined, marker: string, rest: string): string | undefined {
  if (open === undefined) return marker;
  return closesFence(open, marker, rest) ? undefined : open;
}

/**
 * The fence marker (e.g. "```") that is open at the end of `text`, or undefined when none is;
 * `openAtStart` is the one open where `text` starts (which must be at a line's start).
 */
export function openFence(text: string, openAtStart?: string): string | undefined {
  let open = openAtStart;
  for (const [, marker = "", rest = ""] of text.matchAll(FENCE_LINE))
    open = afterFenceLine(open, marker, rest);
  return open;
}

/** The fence marker open after `line` (one line, without a line terminator), `open` being open before it. */
function openAfterLine(line: string, open: string | undefined): string | undefined {
  FENCE_LINE_AT_START.lastIndex = 0;
  const fence = FENCE_LINE_AT_START.exec(line);
  return fence === null ? open : afterFenceLine(open, fence[1] ?? "", fence[2] ?? "");
}

/** The UTF-16 units that end a line for FENCE_LINE's `^` and `$`: LF, CR, U+2028 and U+2029. */
const LINE_TERMINATORS: ReadonlySet<number> = new Set([0x0a, 0x0d, 0x2028, 0x2029]);

/** Where the last line of `text` up to `to` starts when a line ends after `from`, else undefined. */
function lastLineStartAfter(text: string, from: number, to: number): number | undefined {
  for (let at = to; at > from; at -= 1) if (LINE_TERMINATORS.has(text.charCodeAt(at - 1))) return at;
  return undefined;
}

/**
 * The code fence open at a cut of one growing text, beat after beat, reading each line once: the
 * lines before the last one read are kept as the fence open after them, and a beat reads only the
 * text added since, and the line the cut falls in. A text that no longer starts with what was
 * read (replaced, cut, or restarted), or a cut before the line last reached, is read from its start.
 */
export class FenceTracker {
  /** The text as far as it has been read. */
  private read = "";
  /** Where the last line of `read` starts. */
  private lineStart = 0;
  /** The fence marker open where that line starts. */
  private open: string | undefined;

  /** The fence marker open at `end` in `text`: `openFence(text.slice(0, end))`. */
  openAt(text: string, end: number): string | undefined {
    if (end < this.lineStart || !grewFrom(text, this.read)) {
      this.read = "";
      this.lineStart = 0;
      this.open = undefined;
    }
    const lineStart = lastLineStartAfter(text, this.read.length, end);
    if (lineStart !== undefined) {
      this.open = openFence(text.slice(this.lineStart, lineStart), this.open);
      this.lineStart = lineStart;
    }
    if (end > this.read.length) this.read = text.slice(0, end);
    return openAfterLine(text.slice(this.lineStart, end), this.open);
  }
}

/**
 * Whether a streamed answer, now `text`, still starts with `earlier`, what was made of its start
 * at an earlier beat (`text.startsWith(earlier)`). V8's startsWith compares a character at a time
 * (1.6 ms at two million characters); comparing a slice compares memory (0.2 ms).
 */
export function grewFrom(text: string, earlier: string): boolean {
  return text.length >= earlier.length && text.slice(0, earlier.length) === earlier;
}

/**
 * Where the code fence opened with `marker` closes, looking from `from`: the end of its closing
 * line when that is at most `to`, else undefined.
 */
export function fenceCloseWithin(
  markdown: string,
  marker: string,
  from: number,
  to: number,
): number | undefined {
  const lines = new RegExp(FENCE_LINE); // its own lastIndex: matchAll elsewhere starts from the shared one's
  // Only up to the end of the line at `to` is searched: a fence closing later is out of reach anyway.
  const lineEnd = markdown.indexOf("\n", to);
  const window = lineEnd === -1 ? markdown : markdown.slice(0, lineEnd);
  lines.lastIndex = from;
  for (let line = lines.exec(window); line !== null; line = lines.exec(window)) {
    const end = line.index + line[0].length;
    if (end > to) return undefined;
    const [, found = "", rest = ""] = line;
    if (closesFence(marker, found, rest)) return end;
  }
  return undefined;
}

/** A table's delimiter row: cells of dashes, each with an optional colon at either end. */
const TABLE_DELIMITER = /^ {0,3}\|?(?: *:?-+:? *\|)+(?: *:?-+:? *)?$|^ {0,3}\|? *:?-+:? *\|? *$/;

/**
 * The header and delimiter rows of the table that `text` ends inside (its last block is a table
 * whose rows run on past the end), or undefined. Reopened before the rows after a cut, they make
 * those rows a table again, where alone they would show as lines of pipes.
 */
export function openTable(text: string): string | undefined {
  // The last block's first two lines, found without reading the rest of it (a table may be long).
  const blank = text.lastIndexOf("\n\n");
  const start = blank === -1 ? 0 : blank + 2;
  const headerEnd = text.indexOf("\n", start);
  const delimiterEnd = headerEnd === -1 ? -1 : text.indexOf("\n", headerEnd + 1);
  if (delimiterEnd === -1) return undefined;
  const header = text.slice(start, headerEnd);
  const delimiter = text.slice(headerEnd + 1, delimiterEnd);
  return header.includes("|") && TABLE_DELIMITER.test(delimiter) ? `${header}\n${delimiter}` : undefined;
}

/** A block after a blank line, and a line, that start flush left (not an indented continuation). */
const BLOCK_START = /\n\n(?=\S)/;
const LINE_START = /\n(?=\S)/;

/** Where the first match of `pattern` starting at or after `from` ends, when that is at most `to`. */
function startWithin(pattern: RegExp, text: string, from: number, to: number): number | undefined {
  // Only the window is searched (one character past `to` for the lookahead), so a text without
  // any match costs the window, not the rest of the text.
  const match = pattern.exec(text.slice(from, to + 1));
  return match === null ? undefined : from + match.index + match[0].length;
}

/**
 * Where a piece of `markdown` may end, at or after `min` and at most `max`: before the first
 * flush-left block after a blank line there, else (unless `blocksOnly`) before the first
 * flush-left line; undefined when there is neither. Text cut before a block renders, piece by
 * piece, as it does whole, except for a code fence open at the cut (the caller closes and reopens
 * it); a cut before a line may split a paragraph or a table.
 */
export function blockBoundary(
  markdown: string,
  min: number,
  max: number,
  blocksOnly = false,
): number | undefined {
  const block = startWithin(BLOCK_START, markdown, min, max);
  return block !== undefined || blocksOnly ? block : startWithin(LINE_START, markdown, min, max);
}

/**
 * The last blocks of `markdown`, at most `chars` characters (all of it when it is shorter): cut
 * before a flush-left block after a blank line where there is one, else before a flush-left line,
 * else between two characters; a code fence open at the cut is reopened, and a table's header
 * rows are repeated before its rows after the cut. `cut` says whether anything was left out.
 * `fences` tracks the open fence over this answer's earlier tails.
 */
export function markdownTail(
  markdown: string,
  chars: number,
  fences: FenceTracker,
): { readonly text: string; readonly cut: boolean } {
  if (markdown.length <= chars) return { text: markdown, cut: false };
  const end = markdown.length - chars;
  const at = blockBoundary(markdown, end, markdown.length) ?? cutBetweenCharacters(markdown, end);
  const open = fences.openAt(markdown, at) ?? openTable(markdown.slice(0, at));
  const tail = markdown.slice(at);
  return { text: open === undefined ? tail : `${open}\n${tail}`, cut: true };
}
