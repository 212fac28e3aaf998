/**
 * The JS engine of search_files, used when ripgrep is not installed or is switched off: a walk
 * with the same skips and glob meaning (.gitignore is not read) that cannot stall the service.
 * Patterns run on RE2JS, a linear-time engine with ripgrep's syntax (no backreferences or
 * lookaround), so `(a+)+$` cannot backtrack; globs run on it too (search-glob.ts). Only the first
 * `maxLineChars` of a line are matched, fewer for a pattern that compiles large, whose work per
 * character grows with its size (LINE_WORK); the walk yields to the event loop every few
 * milliseconds and gives up after a time limit. It holds a folder open for each level it is inside
 * (files open relative to it), so it goes at most MAX_DEPTH folders deep: a folder the shell nested
 * thousands deep would otherwise hold thousands of file descriptors, and past the process's limit
 * every other open of the service fails. Deeper folders are not searched. Of one folder it reads
 * at most `maxFolderEntries` entries: reading and sorting all of one a command filled with
 * millions of files would hold the event loop for seconds, so a search meeting a fuller folder
 * fails, saying which, rather than leave its files out unsaid.
 * Files open relative to their checked directory (anchored-fs.ts); credential files and hidden
 * paths (the service's own, other conversations' uploads) are skipped.
 */
import path from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import { RE2JS } from "re2js";
import {
  type AnchoredDir,
  FOLDER_ENTRIES_READ,
  openChecked,
  openCheckedDir,
  readUpTo,
} from "./anchored-fs.js";
import { credentialReasonFor } from "./credential-paths.js";
import { compareNames, SKIPPED_DIRECTORIES } from "./list-files.js";
import { matchText, type SearchMatch, type SearchQuery, SearchQueryError } from "./search-backends.js";
import { globMatcher } from "./search-glob.js";
import { decodeText } from "./text-file.js";

/** Limits of the JS engine. */
export interface JsSearchLimits {
  /** Characters of a line the pattern sees (default 10,000). */
  readonly maxLineChars?: number;
  /** Whole search, walk included (default 30,000 ms). */
  readonly timeLimitMs?: number;
  /** Longest stretch of work between two yields to the event loop (default 10 ms). */
  readonly sliceMs?: number;
  /** Most entries of one folder read; a fuller folder fails the search (default 10,000). */
  readonly maxFolderEntries?: number;
}

/**
 * Most work of one line's test, as characters seen × the pattern's compiled instructions: RE2JS's
 * time grows with both, and a short pattern can compile to thousands (ten alternatives of
 * `[\p{L}\p{N}]{1000}x` took 14 s on a 10,000-character line, a call nothing interrupts).
 */
const LINE_WORK = 1_000_000;

/** Most folder levels below the searched one the walk enters, each held open while inside it. */
const MAX_DEPTH = 100;

/** Fewest characters of a line a pattern must be able to see; a larger pattern is refused. */
const MIN_SEEN_CHARS = 100;

function compile(pattern: string): RE2JS {
  try {
    return RE2JS.compile(pattern);
  } catch (error) {
    throw new SearchQueryError(`invalid regular expression: ${(error as Error).message}`);
  }
}

/** How many characters of a line `regex` sees: `maxLineChars`, fewer for a large pattern; refused when too few. */
function seenChars(regex: RE2JS, maxLineChars: number): number {
  const chars = Math.min(maxLineChars, Math.floor(LINE_WORK / regex.programSize()));
  if (chars < MIN_SEEN_CHARS)
    throw new SearchQueryError(
      `the pattern is too large to search with (${regex.programSize()} compiled steps); simplify it, e.g. fewer alternatives or smaller {n} repeats`,
    );
  return chars;
}

/** Search with a JS walk over the files (no .gitignore support). */
export async function searchWithJs(query: SearchQuery, limits: JsSearchLimits = {}): Promise<SearchMatch[]> {
  const timeLimitMs = limits.timeLimitMs ?? 30_000;
  const sliceMs = limits.sliceMs ?? 10;
  const maxFolderEntries = limits.maxFolderEntries ?? FOLDER_ENTRIES_READ;
  const regex = compile(query.pattern);
  const maxLineChars = seenChars(regex, limits.maxLineChars ?? 10_000);
  const isMatch = query.glob ? globMatcher(query.glob) : () => true;
  const matches: SearchMatch[] = [];
  const { target } = query;
  const started = performance.now();
  let sliceStart = started;

  /** Yield to the event loop when this slice is used up; stop at the time limit or an abort. */
  const pace = async (): Promise<void> => {
    const now = performance.now();
    if (now - started > timeLimitMs)
      throw new SearchQueryError(
        `the search took longer than ${timeLimitMs} ms and was stopped; narrow the pattern, path or glob`,
      );
    if (query.signal.aborted) throw new Error("search interrupted");
    if (now - sliceStart < sliceMs) return;
    await nextTurn();
    sliceStart = performance.now();
  };

  const searchText = async (file: string, bytes: Buffer): Promise<void> => {
    if (bytes.length > query.maxFileBytes) return;
    const decoded = decodeText(bytes);
    if (decoded.kind === "binary") return;
    const lines = decoded.text.split(/\r?\n/);
    for (let index = 0; index < lines.length && matches.length <= query.limit; index += 1) {
      const text = lines[index] as string;
      const seen = text.length > maxLineChars ? text.slice(0, maxLineChars) : text;
      if (regex.test(seen)) matches.push({ file, line: index + 1, text: matchText(text) });
      await pace();
    }
  };

  const searchFileIn = async (dir: AnchoredDir, name: string, absolute: string): Promise<void> => {
    if (credentialReasonFor(absolute, target.root) !== undefined || query.hidden(absolute)) return;
    const { handle, stats } = await dir.openFile(name, absolute);
    try {
      if (!stats.isFile() || stats.size > query.maxFileBytes) return;
      await searchText(absolute, await readUpTo(handle, stats.size));
    } finally {
      await handle.close();
    }
  };

  const base = target.absolute;
  const walk = async (dir: AnchoredDir, depth: number): Promise<void> => {
    const { entries, more } = await dir.someEntries(maxFolderEntries);
    if (more)
      throw new SearchQueryError(
        `${path.relative(target.root, dir.absolute) || "."} holds over ${maxFolderEntries} entries, more than a search without ripgrep reads of one folder; search narrower folders (path, glob) or use run_command (grep -r)`,
      );
    entries.sort(compareNames);
    for (const entry of entries) {
      if (matches.length > query.limit) return;
      await pace();
      const absolute = path.join(dir.absolute, entry.name);
      if (entry.isDirectory()) {
        if (depth >= MAX_DEPTH || SKIPPED_DIRECTORIES.has(entry.name) || query.hidden(absolute)) continue;
        const child = await dir.openDir(entry.name, absolute);
        try {
          await walk(child, depth + 1);
        } finally {
          await child.close();
        }
      } else if (entry.isFile() && isMatch(path.relative(base, absolute))) {
        await searchFileIn(dir, entry.name, absolute);
      }
    }
  };

  const opened = await openChecked(target);
  try {
    if (opened.stats.isFile()) {
      if (opened.stats.size <= query.maxFileBytes)
        await searchText(target.absolute, await readUpTo(opened.handle, opened.stats.size));
      return matches;
    }
  } finally {
    await opened.handle.close();
  }
  const top = await openCheckedDir(target);
  try {
    await walk(top, 0);
  } finally {
    await top.close();
  }
  return matches;
}
