/**
 * The query and match types of search_files and its ripgrep engine (`rg --json`, sorted by path,
 * hidden files included, .gitignore honoured, symlinks not followed, started inside the checked
 * directory's open handle). Files over `maxFileBytes` are skipped, as by the JS engine. rg sends a
 * match as one JSON line listing every submatch too, so even a file under that limit can make one
 * longer than a JS string can be (12 MB of "a" searched for `a`: some 900 MB): a report is read
 * up to MAX_EVENT_CHARS (bounded-lines.ts), and a longer one becomes a match without its line
 * number or text (LINE_TOO_LONG); of a whole one only what a match keeps is parsed, not its list of
 * submatches (parsedMatch). Each match keeps at most MATCH_TEXT_MAX characters of its line,
 * copied, never a cut that keeps the whole line alive: 200 matches on 20 MB lines would otherwise
 * hold 4 GB until the search ends. The hidden paths that can be named ahead (the service's
 * own, other conversations' folders under uploads/: `hiddenPaths`) are excluded by anchored globs,
 * so rg does not even read them; matches in credential files and hidden paths are still dropped
 * as they stream in (a folder made since, a name too long for the command line), so they neither
 * reach the model nor count towards the limit.
 * The JS engine used when rg is missing lives in search-js.ts. Both stop after `limit + 1`.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { hostProgram } from "../../core/host-program.js";
import { cutBeforeCharacter } from "../../core/surrogate-pairs.js";
import { openCheckedDir } from "./anchored-fs.js";
import { onBoundedLines } from "./bounded-lines.js";
import { credentialReasonFor } from "./credential-paths.js";
import type { ResolvedPath } from "./workspace-paths.js";

/** One matching line, with an absolute path. */
export interface SearchMatch {
  readonly file: string;
  /** Undefined when rg's report of the match was too long to read (LINE_TOO_LONG). */
  readonly line?: number;
  readonly text: string;
}

/** Most characters of a matching line a match keeps (search_files shows fewer). */
const MATCH_TEXT_MAX = 10_000;

/** Most characters of one rg report read: a longer one is a match on a line too long to show. */
const MAX_EVENT_CHARS = 16 * 1024 * 1024;

/** What a match on a line too long to show has for its text. */
export const LINE_TOO_LONG =
  "(a matching line too long to show; look at parts of it with run_command, e.g. cut -c1-300)";

/**
 * The start of a matching line as a match keeps it: at most MATCH_TEXT_MAX characters, in a string
 * of its own. A cut of a string, or a line split from a file's text, can share the memory of the
 * whole (V8's sliced strings), which would stay alive as long as the match.
 */
export function matchText(line: string): string {
  const kept = line.length > MATCH_TEXT_MAX ? line.slice(0, cutBeforeCharacter(line, MATCH_TEXT_MAX)) : line;
  return Buffer.from(kept, "utf16le").toString("utf16le");
}

/** The path at the start of a match report cut short (its "path" comes first), as rg wrote it. */
const CUT_MATCH_PATH = /^\{"type":"match","data":\{"path":(\{"(?:text|bytes)":"(?:[^"\\]|\\.)*"\})/;

/** What to search. */
export interface SearchQuery {
  readonly pattern: string;
  /** Directory or file to search in (already confined). */
  readonly target: ResolvedPath;
  readonly glob?: string;
  /** Collect at most this many matches plus one (to know there are more). */
  readonly limit: number;
  readonly maxFileBytes: number;
  /** Real paths never searched: the service's own files, other conversations' uploads (WorkspacePaths.hidden). */
  readonly hidden: (absolute: string) => boolean;
  /**
   * Real paths `hidden` hides that ripgrep is told to skip up front (WorkspacePaths.hidingIn);
   * only a speed-up and a courtesy to other conversations: `hidden` stays the rule.
   */
  readonly hiddenPaths?: readonly string[];
  readonly signal: AbortSignal;
}

/** Thrown when the pattern or glob is rejected by the engine. */
export class SearchQueryError extends Error {
  override readonly name = "SearchQueryError";
}

/** Thrown when the rg binary cannot be started (the caller then falls back). */
export class RipgrepMissingError extends Error {
  override readonly name = "RipgrepMissingError";
}

const rgText = (value: { text?: string; bytes?: string } | undefined): string =>
  value?.text ?? (value?.bytes ? Buffer.from(value.bytes, "base64").toString("utf8") : "");

interface RgEvent {
  type: string;
  data?: {
    path?: { text?: string; bytes?: string };
    lines?: { text?: string; bytes?: string };
    line_number?: number;
  };
}

/**
 * Search the checked directory `query.target` with ripgrep; throws RipgrepMissingError when
 * `command` cannot be spawned. rg starts inside the directory as opened by the anchored walk
 * (its working directory is the open handle) and searches ".", so a folder swapped after the
 * check cannot point it elsewhere; it follows no symlinks below. Single files go to the JS engine.
 */
export async function searchWithRipgrep(query: SearchQuery, command = "rg"): Promise<SearchMatch[]> {
  // By absolute path: its working directory is in the workspace (host-program.ts).
  const program = await hostProgram(command);
  if (program === undefined) throw new RipgrepMissingError(`${command} is not installed`);
  const dir = await openCheckedDir(query.target);
  try {
    return await runRipgrep(query, program, dir.path);
  } finally {
    await dir.close();
  }
}

/** Most bytes of exclusion globs put on rg's command line (Linux allows 2 MiB for argv and env). */
const MAX_EXCLUSION_BYTES = 256 * 1024;

/** `text` matched literally by a glob: every character but letters and digits backslash-escaped. */
const literalGlob = (text: string): string => text.replace(/[^A-Za-z0-9]/gu, (character) => `\\${character}`);

/**
 * rg arguments excluding each of `hidden` that lies strictly inside `dir`: `--glob !/<relative>`,
 * anchored by the leading "/" to the search root (rg's working directory, searched as "."), so a
 * folder of the same name deeper down is still searched. Up to MAX_EXCLUSION_BYTES.
 */
export function exclusionGlobs(hidden: readonly string[], dir: string): string[] {
  const args: string[] = [];
  let bytes = 0;
  for (const entry of hidden) {
    const relative = path.relative(dir, entry);
    const outside = relative === ".." || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative);
    if (relative === "" || outside) continue;
    const glob = `!/${relative.split(path.sep).map(literalGlob).join("/")}`;
    bytes += Buffer.byteLength(glob) + 8;
    if (bytes > MAX_EXCLUSION_BYTES) break;
    args.push("--glob", glob);
  }
  return args;
}

/** An rg match report's path (relative to the searched folder) and what a match keeps of it. */
interface ReportedMatch {
  readonly path: string;
  readonly found: Pick<SearchMatch, "line" | "text">;
}

/**
 * Where a match report's submatches start, after its path, line, line number and offset: no JSON
 * string holds `,"` (a quote in one is escaped), so the first is the key's own.
 */
const SUBMATCHES_KEY = ',"submatches":';

/**
 * A whole rg report: a match's path, line number and text; undefined for other reports. Only what
 * a match keeps is parsed, not its submatches: a 300 KB line of "a" searched for `a` has 290,000,
 * and parsing them held the event loop — every chat — some 350 ms a report, as many times as
 * such lines match.
 */
function parsedMatch(raw: string): ReportedMatch | undefined {
  const submatches = raw.indexOf(SUBMATCHES_KEY);
  let event: RgEvent;
  try {
    event = JSON.parse(submatches === -1 ? raw : `${raw.slice(0, submatches)}}}`) as RgEvent;
  } catch {
    return undefined;
  }
  if (event.type !== "match" || !event.data) return undefined;
  const text = matchText(rgText(event.data.lines).replace(/\r?\n$/, ""));
  return { path: rgText(event.data.path), found: { line: event.data.line_number ?? 0, text } };
}

/** A match report cut at MAX_EVENT_CHARS: its path, with LINE_TOO_LONG; undefined for other reports. */
function cutMatch(raw: string): ReportedMatch | undefined {
  const reported = CUT_MATCH_PATH.exec(raw)?.[1];
  if (reported === undefined) return undefined;
  const name = JSON.parse(reported) as { text?: string; bytes?: string };
  return { path: rgText(name), found: { text: LINE_TOO_LONG } };
}

function runRipgrep(query: SearchQuery, command: string, cwd: string): Promise<SearchMatch[]> {
  const args = ["--json", "--sort", "path", "--hidden", "--max-filesize", String(query.maxFileBytes)];
  args.push("--glob", "!.git", "--glob", "!node_modules");
  if (query.glob) args.push("--glob", query.glob);
  // After the caller's glob: of rg's globs the last that matches decides, so none re-includes these.
  args.push(...exclusionGlobs(query.hiddenPaths ?? [], query.target.absolute));
  args.push("-e", query.pattern, "--", ".");
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"], signal: query.signal });
    const matches: SearchMatch[] = [];
    let stderr = "";
    let stoppedEarly = false;
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-4000);
    });
    onBoundedLines(child.stdout, MAX_EVENT_CHARS, (raw, whole) => {
      if (stoppedEarly) return;
      const match = whole ? parsedMatch(raw) : cutMatch(raw);
      if (match === undefined) return;
      const file = path.join(query.target.absolute, match.path);
      if (credentialReasonFor(file, query.target.root) !== undefined || query.hidden(file)) return;
      matches.push({ file, ...match.found });
      if (matches.length > query.limit) {
        stoppedEarly = true;
        child.kill("SIGTERM");
      }
    });
    child.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") reject(new RipgrepMissingError(`${command} is not installed`));
      else reject(error);
    });
    child.on("close", (code) => {
      if (query.signal.aborted) return reject(new Error("search interrupted"));
      if (stoppedEarly || code === 0 || code === 1) return resolve(matches);
      reject(new SearchQueryError(stderr.trim() || `ripgrep exited with code ${code}`));
    });
  });
}
