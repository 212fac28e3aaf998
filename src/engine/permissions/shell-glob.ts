/**
 * Whether a bash glob word could name a file: its last path segment (`*`, `?`, `[…]`, braces read
 * as `*`) matched against a file name, in time bounded by the product of their lengths (a bracket
 * list's ranges each counted: Glob.work). It is its own matcher, not search_files'
 * (search-glob.ts): it follows bash's glob semantics, not a search pattern's, and the permission
 * checks run it on the model's commands, so it never backtracks —
 * a backtracking regular expression takes seconds on a word such as `*a*a*a*b` against a
 * 255-character name, more with each star; and each `[` finds its `]` from a table built once
 * per segment, so parsing is linear in the segment too. Matching leans towards yes, as the checks
 * do (a yes asks a person or tells the reviewer): a POSIX class such as `[[:alpha:]]`, an
 * equivalence class `[[=a=]]`, a collating symbol `[[.a.]]` and a brace list each match anything,
 * letters match either case (bash's nocaseglob) and a leading dot is matched like any character
 * (bash's dotglob).
 */
import { trimTrailing } from "../../core/trim-trailing.js";

/** One step of a glob: any run of characters, or one character that passes a test. */
type Token = "*" | ((char: string) => boolean);

/**
 * A parsed glob segment (see globSegment). `work`: what testing one character of a name against
 * each of its tokens costs, all told: one a token, more for a bracket list with ranges
 * (`[a-cx-z]`), whose test compares the character with each range.
 */
export interface Glob {
  readonly tokens: readonly Token[];
  readonly work: number;
}

/** A name longer than this (NAME_MAX, in bytes, so at least as many characters) names no file. */
export const MAX_NAME_CHARS = 255;

/** The longest glob segment read (a longer one would need more than a name's worth of characters but for stars). */
const MAX_SEGMENT_CHARS = 4 * MAX_NAME_CHARS;

/**
 * A bracket class's name (`[:alpha:]`, an equivalence class `[=e=]`, a collating symbol `[.a.]`)
 * starting at `at`: the index after it, or undefined. A name is short (`xdigit`): look no further.
 */
function classEnd(chars: readonly string[], at: number): number | undefined {
  const kind = chars[at + 1];
  if (chars[at] !== "[" || (kind !== ":" && kind !== "=" && kind !== ".")) return undefined;
  for (let k = at + 2; k < at + 10 && k < chars.length; k++)
    if (chars[k] === kind) return chars[k + 1] === "]" ? k + 2 : undefined;
  return undefined;
}

/** Where bracket lists end, by index (see bracketEnds). */
interface BracketEnds {
  readonly close: readonly number[];
  readonly named: readonly boolean[];
}

/**
 * For each index of a segment, where a bracket list read from there ends: the index of its `]`
 * (or the length, when there is none), and whether a class name stood before it. Found once,
 * right to left, so the `[`s of a word cost no more than its length together.
 */
function bracketEnds(chars: readonly string[]): BracketEnds {
  const close = new Array<number>(chars.length + 1).fill(chars.length);
  const named = new Array<boolean>(chars.length + 1).fill(false);
  for (let i = chars.length - 1; i >= 0; i--) {
    if (chars[i] === "]") {
      close[i] = i;
      continue;
    }
    const after = classEnd(chars, i);
    close[i] = close[after ?? i + 1] as number;
    named[i] = after !== undefined || (named[i + 1] as boolean);
  }
  return { close, named };
}

/** Whether `a` and `b` are one character to a case-insensitive glob. */
function sameLetter(a: string, b: string): boolean {
  return a === b || a.toLowerCase() === b.toLowerCase();
}

/** The bracket expression starting at `open` (a `[`): its test and the index after it, or undefined. */
function bracket(
  chars: readonly string[],
  ends: BracketEnds,
  open: number,
): { test: (char: string) => boolean; work: number; end: number } | undefined {
  let first = open + 1;
  const negated = chars[first] === "!" || chars[first] === "^";
  if (negated) first++;
  // A `]` first in the list is one of its characters; `[:alpha:]` holds a `]` of its own.
  const from = chars[first] === "]" ? first + 1 : first;
  if (from >= chars.length) return undefined;
  const i = ends.close[from] as number;
  if (i >= chars.length) return undefined;
  // A class (its members depend on the locale) matches anything.
  if (ends.named[from] === true) return { test: () => true, work: 1, end: i + 1 };
  // Read once: its single characters (lower-cased, as either case matches) and its ranges, so a
  // test costs one look-up and one comparison per range, not a walk of the whole list.
  const singles = new Set<string>();
  const ranges: Array<readonly [string, string]> = [];
  for (let k = first; k < i; k++) {
    const low = chars[k] as string;
    if (chars[k + 1] === "-" && k + 2 < i) {
      ranges.push([low, chars[k + 2] as string]);
      k += 2;
    } else singles.add(low.toLowerCase());
  }
  const member = (char: string): boolean => {
    const lower = char.toLowerCase();
    if (singles.has(lower)) return true;
    const upper = char.toUpperCase();
    return ranges.some(([low, high]) => (lower >= low && lower <= high) || (upper >= low && upper <= high));
  };
  // A range costs four comparisons (its two ends, in either case).
  return { test: (char) => member(char) !== negated, work: 1 + 4 * ranges.length, end: i + 1 };
}

/**
 * A glob word's last path segment (past trailing slashes), parsed. Everything from its first `{`
 * to its last `}` becomes one `*` first, when it is a brace list: it may hold anything, a slash
 * included.
 */
export function globSegment(word: string): Glob {
  let text = trimTrailing(word, "/");
  const open = text.indexOf("{");
  const close = text.lastIndexOf("}");
  const list = open !== -1 && close > open ? text.slice(open + 1, close) : "";
  // Only a list (`{a,b}`) or a sequence (`{1..3}`) expands: `find -exec … {}` keeps its `{}`.
  if (list.includes(",") || list.includes("..")) text = `${text.slice(0, open)}*${text.slice(close + 1)}`;
  const chars = Array.from(text.slice(text.lastIndexOf("/") + 1));
  // Longer than any name can be matched by, but for stars: not read, and matches anything.
  if (chars.length > MAX_SEGMENT_CHARS) return { tokens: ["*"], work: 1 };
  const ends = bracketEnds(chars);
  const tokens: Token[] = [];
  let work = 0;
  for (let i = 0; i < chars.length; ) {
    const char = chars[i] as string;
    const set = char === "[" ? bracket(chars, ends, i) : undefined;
    if (char === "*") {
      if (tokens.at(-1) !== "*") tokens.push("*");
      i++;
    } else if (set !== undefined) {
      tokens.push(set.test);
      work += set.work - 1;
      i = set.end;
    } else {
      tokens.push(char === "?" ? () => true : (c) => sameLetter(c, char));
      i++;
    }
  }
  return { tokens, work: work + tokens.length };
}

/**
 * Whether `glob` matches the file name `name` (no slash). The classic one-star backtrack: each
 * star is returned to at most once per character of the name, so the work is at most the name's
 * length times the glob's work; a name longer than MAX_NAME_CHARS is no file's and matches nothing.
 */
export function globMatches({ tokens: glob }: Glob, name: string): boolean {
  const chars = Array.from(name);
  if (chars.length > MAX_NAME_CHARS) return false;
  let t = 0;
  let n = 0;
  let star = -1;
  let resume = 0;
  while (n < chars.length) {
    const token = glob[t];
    if (token === "*") {
      star = t++;
      resume = n;
    } else if (token?.(chars[n] as string)) {
      t++;
      n++;
    } else if (star >= 0) {
      t = star + 1;
      n = ++resume;
    } else return false;
  }
  while (glob[t] === "*") t++;
  return t === glob.length;
}
