/**
 * Putting text on one line. Text from people, files or the model (a file's name, a memory, a
 * display name) is often shown as one line of a list or block; a line break inside it would let
 * it start a line of its own there — a forged heading or list item (e.g. a fake "About this
 * user:" entry in a channel memory). Every line break counts, not only "\n": "\r", NEL U+0085,
 * the Unicode line and paragraph separators U+2028/U+2029, and with them every other control
 * character (C0 and C1, tabs, …). A line shown in a list is often clipped too (`clipLine`),
 * between whole characters, and on a card as literal text (`literalLine`).
 */
import { markdownLiteral } from "./person-text.js";
import { clip } from "./surrogate-pairs.js";

/** Control characters (`\p{Cc}`: C0, DEL, C1 with NEL) and the line and paragraph separators. */
const NOT_ONE_LINE = /[\p{Cc}\p{Zl}\p{Zp}]+/gu;

/** `text` on one line: every run of line breaks and control characters becomes one space. */
export function oneLine(text: string): string {
  return text.replace(NOT_ONE_LINE, " ");
}

/** `text` on one line (`oneLine`) with its white space folded: each run one space, none at the ends. */
export function foldedLine(text: string): string {
  return oneLine(text).replace(/\s+/g, " ").trim();
}

/**
 * `text` on one line (`foldedLine`) of at most `max` characters, ending in "…" when cut (`clip`:
 * "" when `max` <= 0).
 */
export function clipLine(text: string, max: number): string {
  return clip(foldedLine(text), max);
}

/**
 * `text` as one line of literal markdown (`clipLine`, then `markdownLiteral`): a card's line naming
 * the model's words — a path, a file's name, a channel — that raw could write lines or links of it.
 */
export function literalLine(text: string, max: number): string {
  return markdownLiteral(clipLine(text, max));
}
