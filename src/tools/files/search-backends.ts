/**
 * The two engines behind search_files: ripgrep (`rg --json`, sorted by path, hidden files
 * included, .gitignore honoured) and a JS walk used when rg is not installed or is switched off
 * (same skips and glob meaning, but .gitignore is not read). Both stop after `maxResults + 1`.
 */
import { spawn } from "node:child_process";
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import picomatch from "picomatch";
import { compareNames, SKIPPED_DIRECTORIES } from "./list-files.js";
import { decodeText } from "./text-file.js";

/** One matching line, with an absolute path. */
export interface SearchMatch {
  readonly file: string;
  readonly line: number;
  readonly text: string;
}

/** What to search. */
export interface SearchQuery {
  readonly pattern: string;
  /** Absolute directory or file to search in (already confined). */
  readonly target: string;
  readonly glob?: string;
  /** Collect at most this many matches plus one (to know there are more). */
  readonly limit: number;
  readonly maxFileBytes: number;
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

/** Search with ripgrep; throws RipgrepMissingError when `command` cannot be spawned. */
export function searchWithRipgrep(query: SearchQuery, command = "rg"): Promise<SearchMatch[]> {
  const args = ["--json", "--sort", "path", "--hidden", "--glob", "!.git", "--glob", "!node_modules"];
  if (query.glob) args.push("--glob", query.glob);
  args.push("-e", query.pattern, "--", query.target);
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], signal: query.signal });
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
      matches.push({
        file: rgText(event.data.path),
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

/** Search with a JS walk over the files (no .gitignore support). */
export async function searchWithJs(query: SearchQuery): Promise<SearchMatch[]> {
  let regex: RegExp;
  try {
    regex = new RegExp(query.pattern);
  } catch (error) {
    throw new SearchQueryError(`invalid regular expression: ${(error as Error).message}`);
  }
  const isMatch = query.glob
    ? picomatch(query.glob, { dot: true, basename: !query.glob.includes("/") })
    : () => true;
  const matches: SearchMatch[] = [];
  const rootInfo = await stat(query.target);
  const base = rootInfo.isDirectory() ? query.target : path.dirname(query.target);

  const searchFile = async (file: string): Promise<void> => {
    const info = await stat(file);
    if (info.size > query.maxFileBytes) return;
    const decoded = decodeText(await readFile(file));
    if (decoded.kind === "binary") return;
    const lines = decoded.text.split(/\r?\n/);
    for (let index = 0; index < lines.length && matches.length <= query.limit; index += 1) {
      const text = lines[index] as string;
      if (regex.test(text)) matches.push({ file, line: index + 1, text });
    }
  };

  const walk = async (dir: string): Promise<void> => {
    const entries = (await readdir(dir, { withFileTypes: true })).sort(compareNames);
    for (const entry of entries) {
      if (matches.length > query.limit) return;
      if (query.signal.aborted) throw new Error("search interrupted");
      const absolute = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRECTORIES.has(entry.name)) await walk(absolute);
      } else if (entry.isFile() && isMatch(path.relative(base, absolute))) {
        await searchFile(absolute);
      }
    }
  };

  if (rootInfo.isDirectory()) await walk(query.target);
  else await searchFile(query.target);
  return matches;
}
