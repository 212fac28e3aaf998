/**
 * Cutting a growing markdown answer where its pieces render as the whole does. Rendering the
 * whole answer at every edit made each beat cost more as the answer grew (half a second per beat
 * at two million characters, and quadratic over the stream). Telegram's live preview shows only
 * the answer's last screen (`markdownTail`); Slack's page layout converts the settled start once,
 * a piece at a time (`blockBoundary`, slack-answer-sections.ts). A cut falls at a block boundary,
 * and a code fence open there is reopened (a table's header rows repeated), so each piece renders
 * as it does inside the whole.
 */

import { cutBetweenCharacters } from "../../core/surrogate-pairs.js";

/** A fence line: up to three spaces, three or more backticks or tildes, then the info string. */
const FENCE_LINE = /^ {0,3}(`{3,}|~{3,})(.*)$/gm;

/** The fence marker (e.g. "```") that is open at the end of `text`, or undefined when none is. */
export function openFence(text: string): string | undefined {
  let open: string | undefined;
  for (const [, marker = "", rest = ""] of text.matchAll(FENCE_LINE)) {
    if (open === undefined) open = marker;
    else if (marker[0] === open[0] && marker.length >= open.length && rest.trim() === "") open = undefined;
  }
  return open;
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
    if (found[0] === marker[0] && found.length >= marker.length && rest.trim() === "") return end;
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
 */
export function markdownTail(
  markdown: string,
  chars: number,
): { readonly text: string; readonly cut: boolean } {
  if (markdown.length <= chars) return { text: markdown, cut: false };
  const end = markdown.length - chars;
  const at = blockBoundary(markdown, end, markdown.length) ?? cutBetweenCharacters(markdown, end);
  const before = markdown.slice(0, at);
  const open = openFence(before) ?? openTable(before);
  const tail = markdown.slice(at);
  return { text: open === undefined ? tail : `${open}\n${tail}`, cut: true };
}
