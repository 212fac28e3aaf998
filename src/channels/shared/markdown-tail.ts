/**
 * The end of a growing markdown answer, for a live preview that shows only its last screen.
 * Rendering the whole answer at every edit made each beat cost more as the answer grew (half a
 * second per beat at two million characters, and quadratic over the stream); the tail keeps a
 * beat's cost flat. The cut falls at a block boundary, and a code fence open there is reopened,
 * so the tail renders as it does inside the whole.
 */

import { splitsSurrogatePair } from "../../core/surrogate-pairs.js";

/** A fence line: up to three spaces, three or more backticks or tildes, then the info string. */
const FENCE_LINE = /^ {0,3}(`{3,}|~{3,})(.*)$/gm;

/** The fence that is open at the end of `text`, or undefined when none is. */
function openFence(text: string): string | undefined {
  let open: string | undefined;
  for (const [, marker = "", rest = ""] of text.matchAll(FENCE_LINE)) {
    if (open === undefined) open = marker;
    else if (marker[0] === open[0] && marker.length >= open.length && rest.trim() === "") open = undefined;
  }
  return open;
}

/** A block after a blank line, and a line, that start flush left (not an indented continuation). */
const BLOCK_START = /\n\n(?=\S)/g;
const LINE_START = /\n(?=\S)/g;

/** Where the first match of `pattern` at or after `from` ends. */
function startAfter(pattern: RegExp, text: string, from: number): number | undefined {
  pattern.lastIndex = from;
  const match = pattern.exec(text);
  return match === null ? undefined : match.index + match[0].length;
}

/**
 * The last blocks of `markdown`, at most `chars` characters (all of it when it is shorter): cut
 * before a flush-left block after a blank line where there is one, else before a flush-left line,
 * else between two characters; a code fence open at the cut is reopened. `cut` says whether
 * anything was left out.
 */
export function markdownTail(
  markdown: string,
  chars: number,
): { readonly text: string; readonly cut: boolean } {
  if (markdown.length <= chars) return { text: markdown, cut: false };
  const end = markdown.length - chars;
  const from = splitsSurrogatePair(markdown, end) ? end + 1 : end;
  const at = startAfter(BLOCK_START, markdown, from) ?? startAfter(LINE_START, markdown, from) ?? from;
  const fence = openFence(markdown.slice(0, at));
  const tail = markdown.slice(at);
  return { text: fence === undefined ? tail : `${fence}\n${tail}`, cut: true };
}
