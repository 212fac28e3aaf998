/**
 * Splits Telegram HTML into messages of at most 4,096 visible characters (Telegram counts the
 * text after entity parsing, in UTF-16 units). Cuts prefer paragraph / code-block boundaries,
 * then line ends, then spaces; a cut never falls inside a tag, an entity or a surrogate pair, and
 * tags open at a cut are closed at the end of one chunk and reopened at the start of the next, so
 * every chunk is balanced on its own and a code block stays a code block on both sides.
 *
 * The choice of cut is the shared splitter's (channels/shared/split-text.ts: greedy fill, then the
 * best-ranked cut that fills half the room, else the best-ranked one, else the last safe spot),
 * worked out here directly on tokens instead of one unit per character, so a long answer costs a
 * few passes over its text, not an object per character: the HTML is read once into tags,
 * entities and runs of plain text (a run counts its length; a cut inside it falls only before a
 * whitespace character or at the overflow, never between a surrogate pair's halves). The result
 * is the same as the shared splitter fed one unit per tag, entity or code point.
 */
import { decodeEntities } from "../shared/markdown-entities.js";

/** Telegram's limit for a message text, after entity parsing. */
export const TELEGRAM_TEXT_LIMIT = 4096;

const TAG = /<(\/?)([a-zA-Z][\w-]*)[^>]*>/uy;
const ENTITY = /&(?:#x[0-9a-fA-F]+|#\d+|[a-zA-Z]+);/uy;

/** Token kinds. */
const RUN = 0;
const ENTITY_TOKEN = 1;
const OPEN = 2;
const CLOSE = 3;

/** What an entity decodes to, as far as cuts care. */
const OTHER = 0;
const NEWLINE = 1;
const BLANK = 2;

/** Cut ranks, best first (as in split-text.ts): paragraph (blank line outside any tag), line end, space. */
const PARAGRAPH = 0;
const LINE = 1;
const SPACE = 2;

let blankUnits: Uint8Array | undefined;

/** Whether a UTF-16 unit is whitespace to `\s` (built once from the regex itself). */
function isBlankUnit(code: number): boolean {
  if (blankUnits === undefined) {
    let all = "";
    for (let code = 0; code < 0x10000; code++) all += String.fromCharCode(code);
    blankUnits = new Uint8Array(0x10000);
    for (const match of all.matchAll(/\s/g)) blankUnits[match.index] = 1;
  }
  return blankUnits[code] === 1;
}

const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/** The HTML as tags, entities and maximal runs of plain text, in order. */
interface Tokens {
  readonly kind: number[];
  readonly start: number[];
  readonly end: number[];
  /** Visible length: a run's length, an entity's decoded length, 0 for a tag. */
  readonly size: number[];
  /** An entity's OTHER / NEWLINE / BLANK. */
  readonly cls: number[];
  /** Open tags minus closing ones before the token. */
  readonly depth: number[];
  /** A tag's lower-case name. */
  readonly name: (string | undefined)[];
}

function tokenize(html: string): Tokens {
  const tokens: Tokens = { kind: [], start: [], end: [], size: [], cls: [], depth: [], name: [] };
  let depth = 0;
  const push = (kind: number, start: number, end: number, size: number, cls: number, name?: string) => {
    tokens.kind.push(kind);
    tokens.start.push(start);
    tokens.end.push(end);
    tokens.size.push(size);
    tokens.cls.push(cls);
    tokens.depth.push(depth);
    tokens.name.push(name);
    if (kind === OPEN) depth += 1;
    else if (kind === CLOSE) depth -= 1;
  };
  const decoded = new Map<string, string>();
  let runStart = 0;
  let lt = html.indexOf("<");
  let amp = html.indexOf("&");
  while (lt !== -1 || amp !== -1) {
    const at = lt === -1 ? amp : amp === -1 ? lt : Math.min(lt, amp);
    let end = -1;
    if (at === lt) {
      TAG.lastIndex = at;
      const match = TAG.exec(html);
      if (match !== null) {
        end = at + match[0].length;
        if (runStart < at) push(RUN, runStart, at, at - runStart, OTHER);
        push(match[1] === "/" ? CLOSE : OPEN, at, end, 0, OTHER, match[2]!.toLowerCase());
      }
    } else {
      ENTITY.lastIndex = at;
      const match = ENTITY.exec(html);
      if (match !== null) {
        const raw = match[0];
        end = at + raw.length;
        let text = decoded.get(raw);
        if (text === undefined) {
          text = decodeEntities(raw);
          decoded.set(raw, text);
        }
        const cls =
          text === "\n" ? NEWLINE : text.length === 1 && isBlankUnit(text.charCodeAt(0)) ? BLANK : OTHER;
        if (runStart < at) push(RUN, runStart, at, at - runStart, OTHER);
        push(ENTITY_TOKEN, at, end, text.length, cls);
      }
    }
    const next = end === -1 ? at + 1 : end;
    if (end !== -1) runStart = end;
    if (lt !== -1 && lt < next) lt = html.indexOf("<", next);
    if (amp !== -1 && amp < next) amp = html.indexOf("&", next);
  }
  if (runStart < html.length) push(RUN, runStart, html.length, html.length - runStart, OTHER);
  return tokens;
}

const EMPTY_PAIR = /<([a-zA-Z][\w-]*)(?:\s[^>]*)?><\/\1>/g;

function dropEmptyPairs(html: string): string {
  let previous = "";
  let current = html;
  while (current !== previous) {
    previous = current;
    current = current.replace(EMPTY_PAIR, "");
  }
  return current;
}

type OpenTag = { readonly raw: string; readonly name: string };

/**
 * Split Telegram HTML into chunks of at most `limit` visible characters each, in order.
 * Whitespace at a cut is dropped; no other text is lost. Returns [] for blank input.
 */
export function splitTelegramHtml(html: string, limit = TELEGRAM_TEXT_LIMIT): string[] {
  // Text without tags that fits whole (most short answers) is its own only chunk.
  if (html.length <= limit && !html.includes("<")) {
    const chunk = html.trim();
    return chunk === "" ? [] : [chunk];
  }
  const tokens = tokenize(html);
  const { kind, start: tokenStart, end: tokenEnd, size, cls, depth } = tokens;
  const count = kind.length;
  const minFill = limit / 2;

  /** Whether the character at `at` (inside token `token` or at its end) is a newline. */
  const newlineAt = (at: number, token: number): boolean => {
    if (at < tokenEnd[token]!) return html.charCodeAt(at) === 10;
    const next = token + 1;
    if (next >= count) return false;
    if (kind[next] === ENTITY_TOKEN) return cls[next] === NEWLINE;
    return kind[next] === RUN && html.charCodeAt(tokenStart[next]!) === 10;
  };

  /** The end of the chunk that starts at `from` (in token `first`), as an offset. */
  const nextCut = (from: number, first: number): number => {
    // Forward: find the overflow, the first unit that no longer fits.
    let length = 0;
    let token = first;
    let overflow = -1;
    for (; token < count; token++) {
      const begin = Math.max(from, tokenStart[token]!);
      const tokenSize = kind[token] === RUN ? tokenEnd[token]! - begin : size[token]!;
      if (length + tokenSize > limit) {
        if (kind[token] === RUN) {
          const unit = begin + Math.max(0, Math.floor(limit - length));
          overflow = isHigh(html.charCodeAt(unit - 1)) && isLow(html.charCodeAt(unit)) ? unit - 1 : unit;
        } else {
          overflow = begin;
        }
        break;
      }
      length += tokenSize;
    }
    if (overflow === -1) return html.length;
    // Backward: the latest cut of each rank, as split-text.ts's chooseCut takes it.
    const ranked: number[] = [-1, -1, -1];
    let filling = -1;
    let atStart = length;
    scan: for (let t = token; t >= first; t--) {
      const begin = Math.max(from, tokenStart[t]!);
      if (t !== token) atStart -= kind[t] === RUN ? tokenEnd[t]! - begin : size[t]!;
      if (kind[t] === RUN) {
        const last = t === token ? overflow : tokenEnd[t]! - 1;
        for (let at = last; at >= begin && at > from; at--) {
          const code = html.charCodeAt(at);
          if (!isBlankUnit(code)) continue;
          const filled = atStart + (at - begin);
          if (filled <= 0) break scan;
          if (filled < minFill && filling !== -1) break scan;
          const rank = code === 10 ? (depth[t] === 0 && newlineAt(at + 1, t) ? PARAGRAPH : LINE) : SPACE;
          if (ranked[rank] !== -1) continue;
          ranked[rank] = at;
          if (filled >= minFill && (filling === -1 || rank < filling)) filling = rank;
          if (rank === PARAGRAPH && filled >= minFill) break scan;
        }
      } else if (kind[t] === ENTITY_TOKEN && cls[t] !== OTHER && begin > from) {
        const filled = atStart;
        if (filled <= 0) break;
        if (filled < minFill && filling !== -1) break;
        const rank =
          cls[t] === NEWLINE ? (depth[t] === 0 && newlineAt(tokenEnd[t]!, t) ? PARAGRAPH : LINE) : SPACE;
        if (ranked[rank] !== -1) continue;
        ranked[rank] = begin;
        if (filled >= minFill && (filling === -1 || rank < filling)) filling = rank;
        if (rank === PARAGRAPH && filled >= minFill) break;
      }
    }
    if (filling !== -1) return ranked[filling]!;
    for (const at of ranked) if (at !== -1) return at;
    // No ranked cut: at the overflow (split-text.ts's last safe spot), or when the first unit
    // alone overflows, just past it, never making no progress.
    if (overflow > from) return overflow;
    if (kind[token] !== RUN) return tokenEnd[token]!;
    return isHigh(html.charCodeAt(from)) && isLow(html.charCodeAt(from + 1)) ? from + 2 : from + 1;
  };

  const chunks: string[] = [];
  const stack: OpenTag[] = [];
  let from = 0;
  let token = 0;
  while (from < html.length) {
    while (token < count && tokenEnd[token]! <= from) token++;
    const cut = nextCut(from, token);
    const opened = stack.map((tag) => tag.raw).join("");
    let t = token;
    for (; t < count && tokenStart[t]! < cut; t++) {
      if (kind[t] === OPEN) {
        stack.push({ raw: html.slice(tokenStart[t], tokenEnd[t]), name: tokens.name[t]! });
      } else if (kind[t] === CLOSE) {
        const index = stack.map((tag) => tag.name).lastIndexOf(tokens.name[t]!);
        if (index !== -1) stack.length = index;
      }
    }
    const closing = [...stack]
      .reverse()
      .map((tag) => `</${tag.name}>`)
      .join("");
    const chunk = dropEmptyPairs(opened + html.slice(from, cut) + closing).trim();
    if (chunk !== "") chunks.push(chunk);
    // The next chunk starts past the whitespace at the cut.
    from = cut;
    for (t = Math.max(token, t - 1); t < count && tokenEnd[t]! <= from; t++);
    while (t < count) {
      if (kind[t] === RUN) {
        while (from < tokenEnd[t]! && isBlankUnit(html.charCodeAt(from))) from++;
        if (from < tokenEnd[t]!) break;
      } else if (kind[t] === ENTITY_TOKEN && cls[t] !== OTHER) {
        from = tokenEnd[t]!;
      } else break;
      t++;
    }
    token = t;
  }
  return chunks;
}
