/**
 * Whether a bash glob word could name a file: its last path segment (`*`, `?`, `[…]`, braces read
 * as `*`) matched against a file name, in time bounded by the product of their lengths. It is its
 * own matcher, not search_files' (search-glob.ts): it follows bash's glob semantics, not a search
 * pattern's, and the permission checks run it on the model's commands, so it never backtracks —
 * a backtracking regular expression takes seconds on a word such as `*a*a*a*b` against a
 * 255-character name, more with each star. Matching leans towards yes, as the checks do (a yes
 * asks a person or tells the reviewer): a POSIX class such as `[[:alpha:]]` and a brace list each
 * match anything, and a leading dot is matched like any character (bash's dotglob).
 */
import { trimTrailing } from "../../core/trim-trailing.js";

/** One step of a glob: any run of characters, or one character that passes a test. */
type Token = "*" | ((char: string) => boolean);

/** A parsed glob segment (see globSegment). */
export type Glob = readonly Token[];

/** A name longer than this (NAME_MAX, in bytes, so at least as many characters) names no file. */
export const MAX_NAME_CHARS = 255;

/** The longest glob segment read (a longer one would need more than a name's worth of characters but for stars). */
const MAX_SEGMENT_CHARS = 4 * MAX_NAME_CHARS;

/** The bracket expression starting at `open` (a `[`): its test and the index after it, or undefined. */
function bracket(
  chars: readonly string[],
  open: number,
): { test: (char: string) => boolean; end: number } | undefined {
  let i = open + 1;
  const negated = chars[i] === "!" || chars[i] === "^";
  if (negated) i++;
  const first = i;
  let loose = false;
  // A `]` first in the list is one of its characters; `[:alpha:]` holds a `]` of its own.
  while (i < chars.length && (chars[i] !== "]" || i === first)) {
    if (chars[i] === "[" && chars[i + 1] === ":") {
      // A class's name is short (`xdigit`): look no further, so many `[:` cost no more than one.
      const close = chars.slice(i + 2, i + 10).indexOf(":") + i + 2;
      if (close > i + 1 && chars[close + 1] === "]") {
        loose = true;
        i = close + 2;
        continue;
      }
    }
    i++;
  }
  if (i >= chars.length) return undefined;
  const list = chars.slice(first, i);
  const member = (char: string): boolean => {
    for (let k = 0; k < list.length; k++) {
      const low = list[k] as string;
      const high = list[k + 2];
      if (list[k + 1] === "-" && high !== undefined) {
        if (char >= low && char <= high) return true;
        k += 2;
      } else if (char === low) return true;
    }
    return false;
  };
  return { test: loose ? () => true : (char) => member(char) !== negated, end: i + 1 };
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
  // Each `[` may read to the end for its `]`: a segment this long is not read, and matches anything.
  if (chars.length > MAX_SEGMENT_CHARS) return ["*"];
  const tokens: Token[] = [];
  for (let i = 0; i < chars.length; ) {
    const char = chars[i] as string;
    const set = char === "[" ? bracket(chars, i) : undefined;
    if (char === "*") {
      if (tokens.at(-1) !== "*") tokens.push("*");
      i++;
    } else if (set !== undefined) {
      tokens.push(set.test);
      i = set.end;
    } else {
      tokens.push(char === "?" ? () => true : (c) => c === char);
      i++;
    }
  }
  return tokens;
}

/**
 * Whether `glob` matches the file name `name` (no slash). The classic one-star backtrack: each
 * star is returned to at most once per character of the name, so the work is at most the product
 * of the lengths; a name longer than MAX_NAME_CHARS is no file's and matches nothing.
 */
export function globMatches(glob: Glob, name: string): boolean {
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
