/**
 * Splits long mrkdwn into ordered chunks that each fit a Slack limit. Preferred cut points, best
 * first: a blank line or the start of a code block, a line end, a line end inside a code block,
 * a space, any other safe position. A cut never lands inside a ``` marker, an `&amp;`-style
 * entity, a `<url|label>` link or a surrogate pair. When a single code block is longer than the
 * limit, the chunk closes the fence and the next one reopens it, so every chunk is balanced.
 * The greedy window and the choice of cut are the shared splitter's (channels/shared/split-text.ts);
 * this file knows Slack's syntax: where code blocks run and which spots are unsafe.
 */
import { ANYWHERE, type SplitUnits, splitRanges } from "../shared/split-text.js";
import { splitsSurrogatePair } from "../../core/surrogate-pairs.js";

const FENCE = "```";
const REOPEN = "```\n";
/** Room kept for closing a fence at the end of a chunk ("\n```"). */
const CLOSE_RESERVE = 4;
const MIN_LIMIT = 16;

/** One chunk: `body` is an exact slice of the input; prefix / suffix reopen and close a fence. */
export interface SplitPart {
  readonly prefix: string;
  readonly body: string;
  readonly suffix: string;
}

/** How many ``` markers the text holds (a chunk is balanced when this is even). */
export function countFences(text: string): number {
  let count = 0;
  for (let i = text.indexOf(FENCE); i !== -1; i = text.indexOf(FENCE, i + FENCE.length)) count += 1;
  return count;
}

interface Scan {
  /** 1 when position i (the gap before text[i]) lies inside a code block. */
  readonly inCode: Uint8Array;
  /** 1 when a cut at position i would break a marker, entity or link (pairs are kept by the units). */
  readonly unsafe: Uint8Array;
}

/** Where `char` next occurs at or after `from`, or the text's length when it does not. */
function nextIndex(text: string, char: string, from: number): number {
  const index = text.indexOf(char, from);
  return index === -1 ? text.length : index;
}

function scan(text: string): Scan {
  const n = text.length;
  const inCode = new Uint8Array(n + 1);
  const unsafe = new Uint8Array(n + 1);
  let state = 0;
  // The next `>` and line end at or after i, found once and reused until i passes them: looking
  // them up afresh at every `<` read to the end of the line each time, quadratic in a long line
  // of links. n stands for "none".
  let close = -1;
  let newline = -1;
  let i = 0;
  while (i < n) {
    if (text.startsWith(FENCE, i)) {
      inCode[i] = state;
      inCode[i + 1] = state;
      inCode[i + 2] = state;
      unsafe[i + 1] = 1;
      unsafe[i + 2] = 1;
      state ^= 1;
      i += FENCE.length;
      continue;
    }
    inCode[i] = state;
    const ch = text[i];
    if (ch === "&") {
      const entity = /^&(?:#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,8});/i.exec(text.slice(i, i + 12));
      if (entity) for (let k = 1; k < entity[0].length; k += 1) unsafe[i + k] = 1;
    } else if (ch === "<" && state === 0) {
      if (close < i) close = nextIndex(text, ">", i);
      if (newline < i) newline = nextIndex(text, "\n", i);
      if (close < newline && close - i < 1_000) {
        for (let k = i + 1; k <= close; k += 1) unsafe[k] = 1;
      }
    }
    i += 1;
  }
  inCode[n] = state;
  return { inCode, unsafe };
}

/** Rank of cutting at position p (lower is better; see split-text.ts); undefined means never. */
function rank(text: string, s: Scan, p: number): number | undefined {
  if (s.unsafe[p] === 1) return undefined;
  const code = s.inCode[p] === 1;
  const prev = text[p - 1];
  if (!code && prev === "\n" && (text[p - 2] === "\n" || text.startsWith(FENCE, p))) return 0;
  if (!code && prev === "\n") return 1;
  if (code && prev === "\n") return 2;
  if (prev === " " || prev === "\t") return 3;
  return ANYWHERE;
}

/** The UTF-16 offset where each code point starts, plus the text's length (a cut never splits a pair). */
function codePointStarts(text: string): Int32Array {
  const starts = new Int32Array(text.length + 1);
  let count = 0;
  for (let i = 0; i < text.length; i += splitsSurrogatePair(text, i + 1) ? 2 : 1) {
    starts[count++] = i;
  }
  starts[count] = text.length;
  return starts.subarray(0, count + 1);
}

/** Split into parts whose `prefix + body + suffix` is at most `limit` characters. */
export function splitParts(text: string, limit: number): SplitPart[] {
  if (limit < MIN_LIMIT) throw new RangeError(`split limit must be at least ${MIN_LIMIT}, got ${limit}`);
  // Text that fits whole (most sections) is its own only part.
  if (text.length <= limit) return text === "" ? [] : [{ prefix: "", body: text, suffix: "" }];
  const s = scan(text);
  const starts = codePointStarts(text);
  const offset = (index: number) => starts[index] as number;
  const prefixAt = (index: number) => (s.inCode[offset(index)] === 1 ? REOPEN : "");
  const units: SplitUnits = {
    length: starts.length - 1,
    size: (index) => offset(index + 1) - offset(index),
    rank: (index) => rank(text, s, offset(index)),
  };
  const ranges = splitRanges(units, {
    room: (start) => {
      const whole = limit - prefixAt(start).length;
      return { whole, cut: whole - CLOSE_RESERVE };
    },
    minFill: (room) => Math.floor(room / 3) + 1,
  });
  return ranges.map(({ start, end }) => {
    const body = text.slice(offset(start), offset(end));
    const suffix =
      s.inCode[offset(end)] === 1 && end < units.length ? (body.endsWith("\n") ? FENCE : `\n${FENCE}`) : "";
    return { prefix: prefixAt(start), body, suffix };
  });
}

/** Split mrkdwn into ordered chunks of at most `limit` characters, each with balanced code fences. */
export function splitMrkdwn(text: string, limit: number): string[] {
  return splitParts(text, limit).map((part) => part.prefix + part.body + part.suffix);
}
