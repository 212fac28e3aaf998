/**
 * search_files' glob for the JS engine, read as ripgrep reads `--glob` and matched in time linear
 * in the path: the glob is turned into an RE2 pattern that RE2JS runs without backtracking. A
 * backtracking RegExp (picomatch's, used before) took seconds to minutes on one ordinary file name
 * for a glob like `*?*?…*?Q`, holding the event loop, so every chat of the process, the whole time.
 * Meaning, as ripgrep's (gitignore style): `*` any run of characters but `/`, `?` one character
 * but `/`, `[ab]` `[a-z]` one of a set (`[!a]` or `[^a]` one not in it), `{a,b}` either (no `**`,
 * empty alternative nor brace inside: search_files refuses those first, glob-braces.ts), `\x` x
 * itself; `**` alone between slashes or at an end any number of folders (otherwise like `*`); a
 * leading `!` inverts the glob. A glob without `/` is matched against the file name at any depth,
 * one with `/` against the path from the searched folder (a leading `/` only anchors it there).
 */
import { RE2JS } from "re2js";
import { SearchQueryError } from "./search-backends.js";

/** One character as an RE2 escape by code point, which needs no quoting rules in or out of a class. */
const literal = (char: string): string => `\\x{${(char.codePointAt(0) as number).toString(16)}}`;

/** The class `[…]` opening at `chars[open]`: its RE2 source and the index after its `]`. */
function characterClass(chars: readonly string[], open: number): { source: string; end: number } {
  let i = open + 1;
  const negated = chars[i] === "!" || chars[i] === "^";
  if (negated) i += 1;
  const first = i;
  let body = "";
  // A `]` right after the opening is one of the set; a backslash is itself, as in ripgrep.
  while (i < chars.length && (chars[i] !== "]" || i === first)) {
    const from = chars[i] as string;
    const to = chars[i + 2];
    if (chars[i + 1] === "-" && to !== undefined && to !== "]") {
      if ((from.codePointAt(0) as number) > (to.codePointAt(0) as number))
        throw new SearchQueryError(`invalid range ${from}-${to} in the glob`);
      body += `${literal(from)}-${literal(to)}`;
      i += 3;
    } else {
      body += literal(from);
      i += 1;
    }
  }
  if (i >= chars.length) throw new SearchQueryError("unclosed [ in the glob (write [[] for a literal [)");
  return { source: `[${negated ? "^" : ""}${body}]`, end: i + 1 };
}

/** The RE2 source matching what `glob` (no leading `!` or `/`, braces braceProblem lets by) matches, whole. */
function translate(glob: string): string {
  const chars = Array.from(glob);
  let source = "";
  // Whether the next character starts a path segment, where `**` means folders.
  let segmentStart = true;
  // Inside a brace group: braces never nest here (braceProblem refuses them first).
  let inBraces = false;
  let i = 0;
  while (i < chars.length) {
    const char = chars[i] as string;
    let piece: string;
    let next = i + 1;
    let startsSegment = false;
    if (char === "*") {
      while (chars[next] === "*") next += 1;
      const globstar = next - i === 2 && segmentStart;
      const after = chars[next];
      if (globstar && after === "/") {
        piece = "(?:.*/)?";
        next += 1;
        startsSegment = true;
      } else {
        piece = globstar && after === undefined ? ".*" : "[^/]*";
      }
    } else if (char === "?") {
      piece = "[^/]";
    } else if (char === "[") {
      ({ source: piece, end: next } = characterClass(chars, i));
    } else if (char === "{") {
      inBraces = true;
      piece = "(?:";
    } else if (char === "," && inBraces) {
      piece = "|";
    } else if (char === "}" && inBraces) {
      inBraces = false;
      piece = ")";
    } else if (char === "\\") {
      const escaped = chars[next];
      if (escaped === undefined) throw new SearchQueryError("the glob ends in a lone \\");
      piece = literal(escaped);
      next += 1;
    } else {
      piece = literal(char);
      startsSegment = char === "/";
    }
    source += piece;
    i = next;
    segmentStart = startsSegment;
  }
  if (inBraces) throw new SearchQueryError("unclosed { in the glob (write [{] for a literal {)");
  return source;
}

/**
 * A test of a file's path relative to the searched folder (with `/` between folders) against
 * `glob`, linear in the path's length; throws SearchQueryError for a glob ripgrep would refuse.
 * Its braces are search_files' to check (braceProblem), once for both engines, before this reads it.
 */
export function globMatcher(glob: string): (relative: string) => boolean {
  const inverted = glob.startsWith("!");
  const positive = inverted ? glob.slice(1) : glob;
  const anywhere = !positive.includes("/");
  const rooted = positive.startsWith("/") ? positive.slice(1) : positive;
  const source = `(?s)${anywhere ? "(?:.*/)?" : ""}${translate(rooted)}`;
  let regex: RE2JS;
  try {
    regex = RE2JS.compile(source);
  } catch (error) {
    throw new SearchQueryError(`invalid glob: ${(error as Error).message}`);
  }
  return (relative) => regex.matches(relative) !== inverted;
}
