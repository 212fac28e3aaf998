/**
 * SkillLoader: finds the skills in their sources — `<workspace>/.coworker/skills`,
 * `<data dir>/skills`, then each folder in `skills.dirs` — where a later source shadows an
 * earlier one of the same name. Each source is read through its SkillSourceAccess: the
 * workspace's without following a link on the way (workspace-skill-access.ts), the operator's
 * folders as they are. A scan opens every SKILL.md but reads and parses only the ones whose
 * modification time or size changed. With `watch` on, each existing source folder is watched
 * (fs.watch, recursive) and a scan with no change reported since the last one — and a full scan
 * not older than `fullScanEveryMs` — returns the previous result without touching the disk beyond
 * one stat per missing source; a watcher that fails falls back to scanning. Scans run one at a
 * time, in the order they were asked for. A malformed or refused skill never throws: it is
 * reported (and logged once) with its file and reason, and does not shadow a valid skill of the
 * same name from an earlier source.
 */
import { type Dirent, type FSWatcher, type Stats, statSync, watch } from "node:fs";
import { stat } from "node:fs/promises";
import path from "node:path";
import { deepFreeze } from "../core/deep-freeze.js";
import type { Logger } from "../logging/logger.js";
import { NotRegularFileError, UnsafeFileError } from "../tools/files/anchored-fs.js";
import { CredentialFileError } from "../tools/files/credential-paths.js";
import { PathOutsideWorkspaceError } from "../tools/files/workspace-paths.js";
import { operatorSkillAccess } from "./operator-skill-access.js";
import { parseSkillFile, type ParsedSkillFile } from "./skill-file.js";
import type { SkillFolder, SkillSourceAccess } from "./skill-source-access.js";
import { SKILL_FILE, type Skill, type SkillProblem, type SkillSource } from "./skill.js";
import { workspaceSkillAccess } from "./workspace-skill-access.js";

/** Largest SKILL.md read, in bytes. */
const SKILL_FILE_MAX_BYTES = 256 * 1024;

/** One scan's outcome: the usable skills by name, and what could not be used. */
export interface SkillScan {
  readonly skills: ReadonlyMap<string, Skill>;
  readonly problems: readonly SkillProblem[];
  /** Skills hidden by a later source's skill of the same name. */
  readonly shadowed: readonly { readonly name: string; readonly hidden: string; readonly by: string }[];
}

interface CacheEntry {
  /** The file read: its device and inode, size and modification time (-1 when it could not be read). */
  readonly dev: number;
  readonly ino: number;
  readonly mtimeMs: number;
  readonly size: number;
  /** The skill (frozen once, shared by every scan) or why the file is not one. */
  readonly outcome:
    | { readonly ok: true; readonly skill: Skill }
    | { readonly ok: false; readonly reason: string };
}

/** A skill folder a scan found, with its SKILL.md's cache entry (undefined: it has none). */
interface FoundSkill {
  readonly file: string;
  readonly entry: CacheEntry | undefined;
  readonly source: SkillSource;
}

/**
 * How a source is read: the workspace's confined, without following links and never into the
 * service's own files (`offLimits`); the others as they are.
 */
function accessOf(source: SkillSource, offLimits: readonly string[]): SkillSourceAccess {
  return source.confinedTo === undefined
    ? operatorSkillAccess(source)
    : workspaceSkillAccess(source, { root: source.confinedTo, offLimits });
}

/** Why a SKILL.md or source folder could not be used, from the error that stopped it. */
function failureReason(error: unknown, unreadable: string): string {
  if (error instanceof NotRegularFileError) return `${SKILL_FILE} is not a regular file`;
  if (
    error instanceof PathOutsideWorkspaceError ||
    error instanceof UnsafeFileError ||
    error instanceof CredentialFileError
  )
    return `not read: ${error.message}`;
  return `${unreadable}: ${String(error)}`;
}

async function parseOutcome(dir: string, source: SkillSource, stats: Stats, text: () => Promise<string>) {
  if (!stats.isFile()) return { ok: false as const, reason: `${SKILL_FILE} is not a regular file` };
  if (stats.size > SKILL_FILE_MAX_BYTES)
    return { ok: false as const, reason: `${SKILL_FILE} is larger than ${SKILL_FILE_MAX_BYTES / 1024} KB` };
  let parsed: ParsedSkillFile;
  try {
    parsed = parseSkillFile(await text(), path.basename(dir));
  } catch (error) {
    return { ok: false as const, reason: `unreadable: ${String(error)}` };
  }
  if (!parsed.ok) return parsed;
  return { ok: true as const, skill: deepFreeze({ ...parsed.document, dir, source }) };
}

function problemKey(problem: SkillProblem): string {
  return `${problem.file}\0${problem.reason}`;
}

/** How a loader watches its sources. */
export interface SkillLoaderOptions {
  /** Watch the source folders and skip scans while nothing changed (default off). */
  readonly watch?: boolean;
  /** With `watch`, scan fully at least this often anyway, in ms (default 60,000). */
  readonly fullScanEveryMs?: number;
  readonly now?: () => number;
  /** Where a skill that is newly malformed or refused is logged (once, with why). */
  readonly logger?: Pick<Logger, "warn">;
  /**
   * The service's own files (data folder, config file…), never read through the workspace's
   * source even where they lie inside the workspace (WorkspaceRootsOptions.offLimits).
   */
  readonly offLimits?: readonly string[];
}

/** Default longest time between full scans while watching. */
export const DEFAULT_FULL_SCAN_EVERY_MS = 60_000;

/** Loads skills from their sources (see the module header). */
export class SkillLoader {
  private readonly access: ReadonlyMap<SkillSource, SkillSourceAccess>;
  private readonly cache = new Map<string, CacheEntry>();
  private readonly watchers = new Map<string, FSWatcher>();
  private last: SkillScan | undefined;
  private lastFullAt = 0;
  private dirty = true;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly sources: readonly SkillSource[],
    private readonly options: SkillLoaderOptions = {},
  ) {
    this.access = new Map(sources.map((source) => [source, accessOf(source, options.offLimits ?? [])]));
  }

  /**
   * The current skills. Never rejects for a bad skill; an unreadable source becomes a problem.
   * When no SKILL.md changed, appeared or disappeared, the previous scan object is returned.
   */
  scan(): Promise<SkillScan> {
    const next = this.queue.then(() => this.scanNow());
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** How the files of `source`, one of this loader's sources, are read (for the skill tools). */
  accessTo(source: SkillSource): SkillSourceAccess {
    const access = this.access.get(source);
    if (access === undefined) throw new Error(`${source.dir} is not one of this loader's skill sources`);
    return access;
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

  private async scanNow(): Promise<SkillScan> {
    const now = (this.options.now ?? Date.now)();
    if (this.options.watch && this.last && !(await this.changedSinceLastScan(now))) return this.last;
    this.dirty = false;
    this.lastFullAt = now;
    if (this.options.watch) for (const source of this.sources) this.watchSource(source.dir);
    return this.fullScan();
  }

  private async changedSinceLastScan(now: number): Promise<boolean> {
    if (this.dirty || now - this.lastFullAt >= (this.options.fullScanEveryMs ?? DEFAULT_FULL_SCAN_EVERY_MS))
      return true;
    for (const source of this.sources)
      if (!this.watchers.has(source.dir) && (await stat(source.dir).catch(() => undefined)) !== undefined)
        return true;
    return false;
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

  private async fullScan(): Promise<SkillScan> {
    const found: FoundSkill[] = [];
    const problems: SkillProblem[] = [];
    let changed = this.last === undefined;
    for (const source of this.sources) {
      let listed: readonly FoundSkill[] | undefined;
      try {
        listed = await this.accessTo(source).withFolder((folder) => this.readFolder(folder, source));
      } catch (error) {
        problems.push({ file: source.dir, reason: failureReason(error, "unreadable folder"), source });
        changed = true;
        continue;
      }
      for (const item of listed ?? []) {
        if (item.entry !== this.cache.get(item.file)) changed = true;
        found.push(item);
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
    this.logNew(problems);
    this.last = Object.freeze({
      skills,
      problems: deepFreeze(problems),
      shadowed: deepFreeze(shadowed),
    });
    return this.last;
  }

  /** The skill folders in the open source folder, each with its SKILL.md's cache entry. */
  private async readFolder(folder: SkillFolder, source: SkillSource): Promise<FoundSkill[]> {
    const found: FoundSkill[] = [];
    for (const item of folder.entries) {
      if (item.name.startsWith(".") || !(item.isDirectory() || item.isSymbolicLink())) continue;
      const file = path.join(source.dir, item.name, SKILL_FILE);
      const entry = await this.read(file, source, folder, item);
      if (entry === undefined && !(await folder.isFolder(item))) continue;
      found.push({ file, entry, source });
    }
    return found;
  }

  /** Log each problem the previous scan did not have: a skill is skipped, and why. */
  private logNew(problems: readonly SkillProblem[]): void {
    const logger = this.options.logger;
    if (logger === undefined) return;
    const known = new Set(this.last?.problems.map(problemKey));
    for (const problem of problems)
      if (!known.has(problemKey(problem)))
        logger.warn(
          { file: problem.file, source: problem.source.kind, reason: problem.reason },
          `skill skipped: ${problem.reason}`,
        );
  }

  /**
   * The cache entry of the SKILL.md of the folder `item`; undefined when the folder has none. An
   * entry is reused while the file is the one it was read from: same device and inode, unchanged
   * size and modification time. That is looked at first with a plain stat, which may follow a link
   * the agent planted since; but a link leads to another inode, and the inode read before holds
   * what was read. Only a changed file is opened again, from the source folder the scan holds open
   * (for the workspace, following no link: a full rescan of 200 skills opened every one, 37 ms).
   */
  private async read(
    file: string,
    source: SkillSource,
    folder: SkillFolder,
    item: Dirent,
  ): Promise<CacheEntry | undefined> {
    const cached = this.cache.get(file);
    if (cached && isSameFile(statOrNothing(file), cached)) return cached;
    try {
      return await folder.withSkillFile(item, async (stats, text) => {
        if (cached && isSameFile(stats, cached)) return cached;
        return {
          dev: stats.dev,
          ino: stats.ino,
          mtimeMs: stats.mtimeMs,
          size: stats.size,
          outcome: await parseOutcome(path.dirname(file), source, stats, text),
        };
      });
    } catch (error) {
      return {
        dev: -1,
        ino: -1,
        mtimeMs: -1,
        size: -1,
        outcome: { ok: false, reason: failureReason(error, "unreadable") },
      };
    }
  }
}

/**
 * The file's stats, or undefined when it cannot be stat'ed: synchronous, as the loader's change
 * check always was (a few microseconds a file; an asynchronous stat costs ten times that in
 * thread-pool round trips, 11 ms a rescan of 200 skills).
 */
function statOrNothing(file: string): Stats | undefined {
  try {
    return statSync(file, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/** Whether `stats` are those of the file `entry` was read from, unchanged since. */
function isSameFile(stats: Stats | undefined, entry: CacheEntry): boolean {
  return (
    stats !== undefined &&
    entry.ino !== -1 &&
    stats.dev === entry.dev &&
    stats.ino === entry.ino &&
    stats.mtimeMs === entry.mtimeMs &&
    stats.size === entry.size
  );
}
