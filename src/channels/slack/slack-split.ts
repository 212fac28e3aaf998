/**
 * Splits long mrkdwn into ordered chunks that each fit a Slack limit. Preferred cut points, best
 * first: a blank line or the start of a code block, a line end, a line end inside a code block,
 * a space, any other safe position. A cut never lands inside a ``` marker, an `&amp;`-style
 * entity, a `<url|label>` link or a surrogate pair. When a single code block is longer than the
 * limit, the chunk closes the fence and the next one reopens it, so every chunk is balanced.
 * The split is greedy: each chunk is filled as far as its limit allows before looking for a cut.
 */
import { isHighSurrogate } from "./slack-limits.js";

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
  /** 1 when a cut at position i would break a marker, entity, link or surrogate pair. */
  readonly unsafe: Uint8Array;
}

function scan(text: string): Scan {
  const n = text.length;
  const inCode = new Uint8Array(n + 1);
  const unsafe = new Uint8Array(n + 1);
  let state = 0;
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
      const close = text.indexOf(">", i);
      const newline = text.indexOf("\n", i);
      if (close !== -1 && (newline === -1 || close < newline) && close - i < 1_000) {
        for (let k = i + 1; k <= close; k += 1) unsafe[k] = 1;
      }
    }
    if (i > 0 && isHighSurrogate(text.charCodeAt(i - 1))) unsafe[i] = 1;
    i += 1;
  }
  inCode[n] = state;
  return { inCode, unsafe };
}

/** Priority of cutting at position p (lower is better); 5 means never. */
function priority(text: string, s: Scan, p: number): number {
  if (s.unsafe[p] === 1) return 5;
  const code = s.inCode[p] === 1;
  const prev = text[p - 1];
  if (!code && prev === "\n" && (text[p - 2] === "\n" || text.startsWith(FENCE, p))) return 0;
  if (!code && prev === "\n") return 1;
  if (code && prev === "\n") return 2;
  if (prev === " " || prev === "\t") return 3;
  return 4;
}

function chooseCut(text: string, s: Scan, from: number, end: number): number {
  const floor = from + Math.floor((end - from) / 3);
  const best: number[] = [-1, -1, -1, -1, -1];
  for (let p = end; p > from; p -= 1) {
    const prio = priority(text, s, p);
    if (prio < 5 && best[prio] === -1) best[prio] = p;
    if (prio === 0 && p > floor) break;
  }
  for (let prio = 0; prio < 4; prio += 1) {
    const p = best[prio] as number;
    if (p > floor) return p;
  }
  for (const p of best) if (p > from) return p;
  // Nothing safe in the window (one enormous link or entity run): cut hard, sparing surrogates.
  return isHighSurrogate(text.charCodeAt(end - 1)) && end - 1 > from ? end - 1 : end;
}

/** Split into parts whose `prefix + body + suffix` is at most `limit` characters. */
export function splitParts(text: string, limit: number): SplitPart[] {
  if (limit < MIN_LIMIT) throw new RangeError(`split limit must be at least ${MIN_LIMIT}, got ${limit}`);
  const s = scan(text);
  const parts: SplitPart[] = [];
  let pos = 0;
  while (pos < text.length) {
    const prefix = s.inCode[pos] === 1 ? REOPEN : "";
    const remaining = text.length - pos;
    if (prefix.length + remaining <= limit) {
      parts.push({ prefix, body: text.slice(pos), suffix: "" });
      break;
    }
    const end = pos + limit - prefix.length - CLOSE_RESERVE;
    const cut = chooseCut(text, s, pos, end);
    const body = text.slice(pos, cut);
    const suffix = s.inCode[cut] === 1 ? (body.endsWith("\n") ? FENCE : `\n${FENCE}`) : "";
    parts.push({ prefix, body, suffix });
    pos = cut;
  }
  return parts;
}

/** Split mrkdwn into ordered chunks of at most `limit` characters, each with balanced code fences. */
export function splitMrkdwn(text: string, limit: number): string[] {
  return splitParts(text, limit).map((part) => part.prefix + part.body + part.suffix);
}
