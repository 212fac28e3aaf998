/**
 * The query and match types of search_files and its ripgrep engine (`rg --json`, sorted by path,
 * hidden files included, .gitignore honoured, symlinks not followed, started inside the checked
 * directory's open handle). Files over `maxFileBytes` are skipped, as by the JS engine: rg sends a
 * match as one JSON line, and a huge one-line file would make a line longer than a JS string can
 * be, which readline throws uncaught. The hidden paths that can be named ahead (the service's
 * own, other conversations' folders under uploads/: `hiddenPaths`) are excluded by anchored globs,
 * so rg does not even read them; matches in credential files and hidden paths are still dropped
 * as they stream in (a folder made since, a name too long for the command line), so they neither
 * reach the model nor count towards the limit.
 * The JS engine used when rg is missing lives in search-js.ts. Both stop after `limit + 1`.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { hostProgram } from "../../core/host-program.js";
import { openCheckedDir } from "./anchored-fs.js";
import { credentialReasonFor } from "./credential-paths.js";
import type { ResolvedPath } from "./workspace-paths.js";

/** One matching line, with an absolute path. */
export interface SearchMatch {
  readonly file: string;
  readonly line: number;
  readonly text: string;
}

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
    const lines = createInterface({ input: child.stdout });
    lines.on("line", (raw) => {
      if (stoppedEarly) return;
      let event: RgEvent;
      try {
        event = JSON.parse(raw) as RgEvent;
      } catch {
        return;
      }
      if (event.type !== "match" || !event.data) return;
      const file = path.join(query.target.absolute, rgText(event.data.path));
      if (credentialReasonFor(file, query.target.root) !== undefined || query.hidden(file)) return;
      matches.push({
        file,
        line: event.data.line_number ?? 0,
        text: rgText(event.data.lines).replace(/\r?\n$/, ""),
      });
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
