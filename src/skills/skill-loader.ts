/**
 * SkillLoader: finds the skills in their sources — `<workspace>/.coworker/skills`,
 * `<data dir>/skills`, then each folder in `skills.dirs` — where a later source shadows an
 * earlier one of the same name. A scan stats every SKILL.md but reads and parses only the ones
 * whose modification time or size changed. With `watch` on, each existing source folder is
 * watched (fs.watch, recursive) and a scan with no change reported since the last one — and a
 * full scan not older than `fullScanEveryMs` — returns the previous result without touching the
 * disk beyond one stat per missing source; a watcher that fails falls back to scanning. Scanning
 * is synchronous because the per-turn context is built synchronously. A malformed skill never
 * throws: it is reported with its file and reason, and does not shadow a valid skill of the same
 * name from an earlier source.
 */
import {
  closeSync,
  constants,
  type Dirent,
  type FSWatcher,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  watch,
} from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { deepFreeze } from "../core/deep-freeze.js";
import { isInside } from "../tools/files/workspace-paths.js";
import { parseSkillFile, type ParsedSkillFile } from "./skill-file.js";
import type { Skill, SkillProblem, SkillSource } from "./skill.js";

/** The file every skill folder holds. */
export const SKILL_FILE = "SKILL.md";
/** Largest SKILL.md read, in bytes. */
export const SKILL_FILE_MAX_BYTES = 256 * 1024;
/** Most files listed beside one skill. */
export const SKILL_FILES_MAX = 200;

/** One scan's outcome: the usable skills by name, and what could not be used. */
export interface SkillScan {
  readonly skills: ReadonlyMap<string, Skill>;
  readonly problems: readonly SkillProblem[];
  /** Skills hidden by a later source's skill of the same name. */
  readonly shadowed: readonly { readonly name: string; readonly hidden: string; readonly by: string }[];
}

interface CacheEntry {
  readonly mtimeMs: number;
  readonly size: number;
  /** The skill (frozen once, shared by every scan) or why the file is not one. */
  readonly outcome:
    | { readonly ok: true; readonly skill: Skill }
    | { readonly ok: false; readonly reason: string };
}

function errorCode(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "code" in error ? String(error.code) : undefined;
}

/** Whether a source entry is a folder (a symbolic link is followed). */
function isFolder(dir: string, item: Dirent): boolean {
  return item.isDirectory() || (statSync(dir, { throwIfNoEntry: false })?.isDirectory() ?? false);
}

function entriesOf(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    if (errorCode(error) === "ENOENT" || errorCode(error) === "ENOTDIR") return [];
    throw error;
  }
}

/** A confined source's SKILL.md that is a link out of its folder. */
class LinkOutOfSource extends Error {}

/**
 * The text of a SKILL.md. For a confined source it is read from its real path without following a
 * last link, once that path is known to lie inside the source's folder: a link the agent's
 * commands left there would otherwise show a host file to the model.
 */
function skillText(file: string, source: SkillSource): string {
  if (source.confinedTo === undefined) return readFileSync(file, "utf8");
  const real = realpathSync(file);
  if (!isInside(real, realpathSync(source.confinedTo)))
    throw new LinkOutOfSource(`${SKILL_FILE} is a link out of the workspace (to ${real}); it is not read`);
  const fd = openSync(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
}

function parseOutcome(file: string, source: SkillSource, size: number, isFile: boolean) {
  const dir = path.dirname(file);
  if (!isFile) return { ok: false as const, reason: `${SKILL_FILE} is not a regular file` };
  if (size > SKILL_FILE_MAX_BYTES)
    return { ok: false as const, reason: `${SKILL_FILE} is larger than ${SKILL_FILE_MAX_BYTES / 1024} KB` };
  let parsed: ParsedSkillFile;
  try {
    parsed = parseSkillFile(skillText(file, source), path.basename(dir));
  } catch (error) {
    if (error instanceof LinkOutOfSource) return { ok: false as const, reason: error.message };
    return { ok: false as const, reason: `unreadable: ${String(error)}` };
  }
  if (!parsed.ok) return parsed;
  return { ok: true as const, skill: deepFreeze({ ...parsed.document, dir, source }) };
}

/** How a loader watches its sources. */
export interface SkillLoaderOptions {
  /** Watch the source folders and skip scans while nothing changed (default off). */
  readonly watch?: boolean;
  /** With `watch`, scan fully at least this often anyway, in ms (default 60,000). */
  readonly fullScanEveryMs?: number;
  readonly now?: () => number;
}

/** Default longest time between full scans while watching. */
export const DEFAULT_FULL_SCAN_EVERY_MS = 60_000;

/** Loads skills from their sources (see the module header). */
export class SkillLoader {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly watchers = new Map<string, FSWatcher>();
  private last: SkillScan | undefined;
  private lastFullAt = 0;
  private dirty = true;

  constructor(
    readonly sources: readonly SkillSource[],
    private readonly options: SkillLoaderOptions = {},
  ) {}

  /**
   * The current skills. Never throws for a bad skill; an unreadable source becomes a problem.
   * When no SKILL.md changed, appeared or disappeared, the previous scan object is returned.
   */
  scan(): SkillScan {
    const now = (this.options.now ?? Date.now)();
    if (this.options.watch && this.last && !this.changedSinceLastScan(now)) return this.last;
    this.dirty = false;
    this.lastFullAt = now;
    if (this.options.watch) for (const source of this.sources) this.watchSource(source.dir);
    return this.fullScan();
  }

  /** Forget what the watchers reported: the next scan reads the folders. */
  invalidate(): void {
    this.dirty = true;
  }

  /** Stop watching the sources. */
  close(): void {
    for (const watcher of this.watchers.values()) watcher.close();
    this.watchers.clear();
    this.dirty = true;
  }

  private changedSinceLastScan(now: number): boolean {
    if (this.dirty || now - this.lastFullAt >= (this.options.fullScanEveryMs ?? DEFAULT_FULL_SCAN_EVERY_MS))
      return true;
    return this.sources.some(
      (source) =>
        !this.watchers.has(source.dir) && statSync(source.dir, { throwIfNoEntry: false }) !== undefined,
    );
  }

  private watchSource(dir: string): void {
    if (this.watchers.has(dir)) return;
    try {
      const watcher = watch(dir, { recursive: true, persistent: false }, () => {
        this.dirty = true;
      });
      watcher.on("error", () => {
        watcher.close();
        this.watchers.delete(dir);
        this.dirty = true;
      });
      this.watchers.set(dir, watcher);
    } catch {
      // A missing (or unwatchable) source is checked again on every scan instead.
    }
  }

  private fullScan(): SkillScan {
    const found: { file: string; entry: CacheEntry | undefined; source: SkillSource }[] = [];
    const problems: SkillProblem[] = [];
    let changed = this.last === undefined;
    for (const source of this.sources) {
      let entries: Dirent[];
      try {
        entries = entriesOf(source.dir);
      } catch (error) {
        problems.push({ file: source.dir, reason: `unreadable folder: ${String(error)}`, source });
        changed = true;
        continue;
      }
      for (const item of entries) {
        if (item.name.startsWith(".") || !(item.isDirectory() || item.isSymbolicLink())) continue;
        const dir = path.join(source.dir, item.name);
        const file = path.join(dir, SKILL_FILE);
        const entry = this.read(file, source);
        if (entry === undefined && !isFolder(dir, item)) continue;
        if (entry !== this.cache.get(file)) changed = true;
        found.push({ file, entry, source });
      }
    }
    const withFile = found.filter((item) => item.entry !== undefined).length;
    if (!changed && this.last && withFile === this.cache.size && problems.length === 0) return this.last;
    this.cache.clear();
    const skills = new Map<string, Skill>();
    const shadowed: { name: string; hidden: string; by: string }[] = [];
    for (const { file, entry, source } of found) {
      if (!entry) {
        problems.push({ file, reason: `the folder has no ${SKILL_FILE}`, source });
        continue;
      }
      this.cache.set(file, entry);
      if (!entry.outcome.ok) {
        problems.push({ file, reason: entry.outcome.reason, source });
        continue;
      }
      const skill = entry.outcome.skill;
      const earlier = skills.get(skill.name);
      if (earlier) shadowed.push({ name: earlier.name, hidden: earlier.dir, by: skill.dir });
      skills.set(skill.name, skill);
    }
    this.last = Object.freeze({
      skills,
      problems: deepFreeze(problems),
      shadowed: deepFreeze(shadowed),
    });
    return this.last;
  }

  /**
   * The cache entry of a SKILL.md, reused when its modification time and size are unchanged;
   * undefined when the folder has none.
   */
  private read(file: string, source: SkillSource): CacheEntry | undefined {
    let stats: ReturnType<typeof statSync>;
    try {
      stats = statSync(file, { throwIfNoEntry: false });
    } catch (error) {
      return { mtimeMs: -1, size: -1, outcome: { ok: false, reason: `unreadable: ${String(error)}` } };
    }
    if (stats === undefined) return undefined;
    const cached = this.cache.get(file);
    if (cached && cached.mtimeMs === stats.mtimeMs && cached.size === stats.size) return cached;
    return {
      mtimeMs: stats.mtimeMs,
      size: stats.size,
      outcome: parseOutcome(file, source, stats.size, stats.isFile()),
    };
  }
}

/**
 * The files beside a skill's SKILL.md, relative to its folder, sorted (at most SKILL_FILES_MAX;
 * dot-files and symbolic links are left out).
 */
export async function filesBeside(skill: Pick<Skill, "dir">): Promise<string[]> {
  const found: string[] = [];
  const walk = async (relative: string): Promise<void> => {
    const entries = await readdir(path.join(skill.dir, relative), { withFileTypes: true }).catch(() => []);
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (found.length >= SKILL_FILES_MAX) return;
      if (entry.name.startsWith(".")) continue;
      const child = relative ? `${relative}/${entry.name}` : entry.name;
      if (entry.isDirectory()) await walk(child);
      else if (entry.isFile() && child !== SKILL_FILE) found.push(child);
    }
  };
  await walk("");
  return found;
}
