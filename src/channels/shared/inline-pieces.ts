/**
 * A paragraph's inline text cut into pieces that `marked` reads one at a time, so its emphasis
 * search (about the piece's length for every emphasis delimiter in it: 40,000 characters of `_a`
 * took two seconds, `!*a` cost 19 µs a character in 2,000-character runs) stays cheap. A piece
 * ends after INLINE_PIECE characters or its PIECE_DELIMITERS-th `*` / `_`, and where it is cut
 * decides whether the text renders as it would whole:
 *
 * - Code spans (CommonMark: a backtick run opens one that only the next run of the same length
 *   closes; an unmatched run is literal backticks, a backslash outside code escapes one) are never
 *   cut, and the delimiters inside them count nothing (`marked` masks them from its search).
 * - A piece ends after whitespace, before a word: never inside a word or URL, never between
 *   the spaces or backslash and the line end of a hard break. Best outside any link text or
 *   destination and with the emphasis opened in the piece closed again, then outside links, then
 *   at any such whitespace; the latest cut of the best kind in the piece's second half, else the
 *   latest before it.
 * - With no whitespace outside code (hostile text such as `!*a` repeated) it ends at the limit,
 *   or before the code span there, between whole characters; a piece that is one code span
 *   longer than the limit is taken whole (a matched code span costs `marked` one linear match).
 *
 * So every piece holds at most PIECE_DELIMITERS delimiters outside code, and is at most
 * INLINE_PIECE characters long unless it is a single code span.
 */
import { cutBeforeCharacter, cutBetweenCharacters } from "../../core/surrogate-pairs.js";

/** The longest piece (but for a single code span), and the most emphasis delimiters in one. */
export const INLINE_PIECE = 2_000;
export const PIECE_DELIMITERS = 64;

const BACKTICK = 0x60;
const BACKSLASH = 0x5c;
const STAR = 0x2a;
const UNDERSCORE = 0x5f;
const TILDE = 0x7e;
const SPACE = 0x20;
const TAB = 0x09;
const NEWLINE = 0x0a;

const isWhitespace = (unit: number) => unit === SPACE || unit === TAB || unit === NEWLINE;
const isAsciiPunctuation = (unit: number) =>
  (unit >= 0x21 && unit <= 0x2f) ||
  (unit >= 0x3a && unit <= 0x40) ||
  (unit >= 0x5b && unit <= 0x60) ||
  (unit >= 0x7b && unit <= 0x7e);
const PUNCTUATION = /[\p{P}\p{S}]/u;
const WHITESPACE = /\s/u;

/** Code spans of `text` as [open, close) pairs in order, found in one pass (CommonMark's pairing). */
function codeSpans(text: string): [number, number][] {
  // Starts of every maximal backtick run, by length; closers are looked up in order, so one
  // pointer per length finds each in amortised constant time.
  const runs = new Map<number, number[]>();
  for (let at = text.indexOf("`"); at !== -1; ) {
    let end = at + 1;
    while (text.charCodeAt(end) === BACKTICK) end += 1;
    const starts = runs.get(end - at);
    if (starts) starts.push(at);
    else runs.set(end - at, [at]);
    at = text.indexOf("`", end);
  }
  if (runs.size === 0) return [];
  const next = new Map<number, number>();
  const closer = (from: number, length: number): number | undefined => {
    const starts = runs.get(length);
    if (!starts) return undefined;
    let index = next.get(length) ?? 0;
    while (index < starts.length && starts[index]! < from) index += 1;
    next.set(length, index);
    return starts[index];
  };
  const spans: [number, number][] = [];
  let tick = text.indexOf("`");
  let slash = text.indexOf("\\");
  for (let at = 0; at < text.length; ) {
    const unit = text.charCodeAt(at);
    if (unit === BACKSLASH && isAsciiPunctuation(text.charCodeAt(at + 1))) {
      at += 2;
    } else if (unit === BACKTICK) {
      let end = at + 1;
      while (text.charCodeAt(end) === BACKTICK) end += 1;
      const close = closer(end, end - at);
      if (close === undefined) {
        at = end;
      } else {
        spans.push([at, close + end - at]);
        at = close + end - at;
      }
    } else {
      // On to the next backslash or backtick (each looked up again only once passed).
      if (tick !== -1 && tick < at) tick = text.indexOf("`", at);
      if (slash !== -1 && slash <= at) slash = text.indexOf("\\", at + 1);
      if (tick === -1) break;
      at = slash !== -1 && slash < tick ? slash : tick;
    }
  }
  return spans;
}

/** The character before/after a delimiter run, as emphasis flanking sees it (none is whitespace). */
const kind = (char: string | undefined): "space" | "punct" | "other" =>
  char === undefined || WHITESPACE.test(char) ? "space" : PUNCTUATION.test(char) ? "punct" : "other";

/** How a delimiter run of `unit` between `before` and `after` changes the emphasis open in a piece. */
function emphasisStep(
  unit: number,
  before: string | undefined,
  after: string | undefined,
  open: number,
): number {
  const prev = kind(before);
  const next = kind(after);
  const left = next !== "space" && (next !== "punct" || prev !== "other");
  const right = prev !== "space" && (prev !== "punct" || next !== "other");
  const opens = unit === UNDERSCORE ? left && (!right || prev === "punct") : left;
  const closes = unit === UNDERSCORE ? right && (!left || next === "punct") : right;
  if (closes && open > 0) return open - 1;
  if (opens) return open + 1;
  return open;
}

/** Kinds of cut, best first: outside links with emphasis closed, outside links, any whitespace. */
const CUT_KINDS = 3;

/** Where the piece of `text` from `start` ends (see the header). */
function pieceEnd(text: string, start: number, spans: readonly [number, number][], span: number): number {
  const best: (number | undefined)[] = new Array(CUT_KINDS).fill(undefined);
  let outside: number | undefined; // the latest cut outside code, whitespace or not
  let delimiters = 0;
  let brackets = 0;
  let destination = 0;
  const open = { [STAR]: 0, [UNDERSCORE]: 0, [TILDE]: 0 } as Record<number, number>;
  let limit = Math.min(text.length, start + INLINE_PIECE);
  let at = start;
  while (at < text.length) {
    const unit = text.charCodeAt(at);
    if (at > start) {
      if (at >= limit) break;
      outside = at;
      if (isWhitespace(text.charCodeAt(at - 1)) && !isWhitespace(unit) && !breaksHardBreak(text, at)) {
        const linked = brackets > 0 || destination > 0;
        const closed = open[STAR] === 0 && open[UNDERSCORE] === 0 && open[TILDE] === 0;
        const level = linked ? 2 : closed ? 0 : 1;
        best[level] = at;
      }
    }
    const code = spans[span];
    if (code !== undefined && code[0] === at) {
      // Taken whole; nothing inside counts or can be cut.
      span += 1;
      if (code[1] > limit && at > start) break; // cut before it
      at = code[1];
      if (at > limit) return at; // the piece is this one code span
      continue;
    }
    if (unit === BACKSLASH && isAsciiPunctuation(text.charCodeAt(at + 1))) {
      if (at + 2 > limit && at > start) break; // an escape is not parted
      at += 2;
      continue;
    }
    if (unit === STAR || unit === UNDERSCORE || unit === TILDE) {
      let end = at + 1;
      while (text.charCodeAt(end) === unit) end += 1;
      if (unit !== TILDE) {
        if (delimiters + (end - at) > PIECE_DELIMITERS) {
          limit = Math.min(limit, at + PIECE_DELIMITERS - delimiters);
          if (limit <= at) break;
        }
        delimiters += end - at;
      }
      open[unit] = emphasisStep(unit, at > start ? text[at - 1] : undefined, text[end], open[unit]!);
      at = Math.min(end, limit);
      continue;
    }
    if (destination > 0) {
      if (unit === 0x28) destination += 1;
      else if (unit === 0x29) destination -= 1;
    } else if (unit === 0x5b) {
      brackets += 1;
    } else if (unit === 0x5d && brackets > 0) {
      brackets -= 1;
      if (brackets === 0 && text.charCodeAt(at + 1) === 0x28) {
        destination = 1;
        at += 2;
        continue;
      }
    }
    at += 1;
  }
  if (at >= text.length && limit >= text.length) return text.length;
  const mid = start + Math.ceil((limit - start) / 2);
  const late = best.find((cut) => cut !== undefined && cut >= mid);
  if (late !== undefined) return late;
  const early = best.find((cut) => cut !== undefined);
  if (early !== undefined) return early;
  if (at < text.length && at > start) {
    // Stopped at the limit or before a code span: no whitespace; between whole characters.
    const cut = cutBeforeCharacter(text, at);
    if (cut > start) return cut;
  }
  return outside !== undefined ? cutBeforeCharacter(text, outside) : at;
}

/** Whether a cut at `at` (after whitespace) would part a hard break (`  \n`, `\\\n`) from its line end. */
function breaksHardBreak(text: string, at: number): boolean {
  let from = at;
  while (from > 0 && isWhitespace(text.charCodeAt(from - 1))) from -= 1;
  const newline = text.indexOf("\n", from);
  if (newline === -1 || newline >= at) return false;
  return text.charCodeAt(from - 1) === BACKSLASH || text.startsWith("  ", newline - 2);
}

/** `text` in pieces for `marked`'s inline pass (see the header); joined, they are `text`. */
export function inlinePieces(text: string): string[] {
  const spans = codeSpans(text);
  const pieces: string[] = [];
  let span = 0;
  for (let start = 0; start < text.length; ) {
    while (span < spans.length && spans[span]![0] < start) span += 1;
    const found = pieceEnd(text, start, spans, span);
    const end = found > start ? found : cutBetweenCharacters(text, start + 1); // never stalls
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces.length === 0 ? [text] : pieces;
}
