/**
 * Marks in a shell word's text where bash would expand it, and the path helpers that respect them:
 * shell-words.ts says only that a word expands somewhere (and drops a substitution's text), so the
 * download heuristics (downloads.ts, downloader-targets.ts) put a private-use character before each
 * part that is not on the line, and a target read from such a word says which part of it is not.
 */
import path from "node:path";
import type { ShellWord } from "./shell-words.js";

/**
 * Marks put into a word's text where bash would expand it (shell-words.ts says only that a word
 * expands somewhere, and drops a substitution's text), so a target read from it says which part of
 * it is not on the line: EXPANDS before each `$ ~ { } * ? [ ]` of a word bash expands; HIDDEN at
 * the end of a word bash expands on a line holding a substitution or `$'…'` / `$"…"`, which leave
 * no trace in the text, so anywhere in it; IN_NAME for those in a name read from a URL (curl -O,
 * wget), which stay within it. Characters of Unicode's private use area, which no command here
 * spells.
 */
const EXPANDS = "\uE000";
const IN_NAME = "\uE001";
export const HIDDEN = "\uE002";
export const MARKED = /[\uE000-\uE002]/;

/** A word's text with the marks (above) where bash would expand it; `hidden`: its line holds a substitution. */
export function markedText(word: ShellWord, hidden: boolean): string {
  if (word.literal) return word.text;
  if (hidden) return `${word.text}${HIDDEN}`;
  return word.text.replace(/[$~{}*?[\]]/g, `${EXPANDS}$&`);
}

/** A saved name read from a URL (never holding `/`): its expansions stay within it (IN_NAME). */
export function nameFromUrl(name: string): string {
  return name.replace(new RegExp(MARKED, "g"), IN_NAME);
}

/** `dir` and `file` joined as path.join does, but as written when an expansion may hold `..` there. */
export function under(dir: string, file: string): string {
  if (dir === "" || !(MARKED.test(dir) || MARKED.test(file))) return path.join(dir, file);
  return `${dir}/${file}`;
}

/**
 * The folder a download the command line does not name is written into (one named by the server,
 * curl's -J, wget's --content-disposition; or by curl's URL globbing): the whole folder counts as
 * downloaded (`./` for the command's own, which holds any relative path).
 */
export function serverNamedFolder(dir: string): string {
  return MARKED.test(dir) ? `${dir}/` : `${path.posix.join(dir || ".", ".")}/`;
}

/**
 * Whether a downloader's word (marked: markedText) may hold options of its own: bash expands it from
 * its start (`"$F"`, `$(…)`, `{-o,x}`, a glob matching a file `-ox`) or somewhere a substitution
 * left no trace (HIDDEN), so it may be `-oevil.sh`, or a URL whose saved name is not on the line
 * (`wget "$U"`): it counts as a target bash expands (placed), and the command asks.
 */
export function mayHoldOptions(word: string): boolean {
  return word.startsWith(EXPANDS) || word.includes(HIDDEN);
}
