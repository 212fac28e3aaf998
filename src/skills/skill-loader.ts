/**
 * SkillLoader: finds the skills in their sources — `<workspace>/.coworker/skills`,
 * `<data dir>/skills`, then each folder in `skills.dirs` — where a later source shadows an
 * earlier one of the same name. Each source is read through its SkillSourceAccess: the
 * workspace's without following a link on the way (workspace-skill-access.ts), the operator's
 * folders as they are. A scan stats every SKILL.md and opens, reads and parses only the ones that
 * changed (inode, size, modification or change time), a refused one too. With `watch` on, each
 * existing source folder is watched (fs.watch, recursive) and a scan with no change reported
 * since the last one — and a full scan not older than `fullScanEveryMs` — returns the previous
 * result without touching the disk beyond one stat per missing source; a watcher that fails falls
 * back to scanning. Scans run one at a time, in the order they were asked for. A malformed or
 * refused skill never throws: it is reported (and logged once) with its file and reason, and does
 * not shadow a valid skill of the same name from an earlier source. While save_skill replaces a
 * workspace skill, the old folder moved aside stands for it until the new one is in place, so a
 * scan between the two renames never finds the skill gone; only while that save's staging folder
 * is there and the skill's own folder is not (the save's folder names: skill-save-folders.ts). A save that fails between the renames puts the old
 * folder back (skill-save-write.ts); one whose process died there leaves both folders, and the old
 * skill is served from its aside folder until the cleanup before a library's first scan puts it
 * back (skill-save-leftovers.ts, once the folders are older than a save under way in another
 * process could be; a staging folder is never completed into place, only removed).
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
import { asideSkillName } from "./skill-save-folders.js";
import { isLinkRefusal, type SkillFolder, type SkillSourceAccess } from "./skill-source-access.js";
import { SKILL_FILE } from "../core/workspace-layout.js";
import type { Skill, SkillProblem, SkillSource } from "./skill.js";
import { workspaceSkillAccess } from "./workspace-skill-access.js";

/** Largest SKILL.md read, in bytes (a larger one is skipped; save_skill refuses to write one). */
export const SKILL_FILE_MAX_BYTES = 256 * 1024;

/** One scan's outcome: the usable skills by name, and what could not be used. */
export interface SkillScan {
  readonly skills: ReadonlyMap<string, Skill>;
  readonly problems: readonly SkillProblem[];
  /** Skills hidden by a later source's skill of the same name. */
  readonly shadowed: readonly { readonly name: string; readonly hidden: string; readonly by: string }[];
}

/**
 * Which file an outcome is of, as a stat shows it: device and inode, size, and modification and
 * change times (the change time moves with a chmod, which may make an unreadable file readable).
 */
interface FileKey {
  readonly dev: number;
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
  readonly ctimeMs: number;
}

interface CacheEntry {
  /**
   * The file the outcome is of: the one read, or the one a plain stat showed before it was
   * refused; undefined when that cannot be told (then the file is looked at again each scan).
   */
  readonly key: FileKey | undefined;
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

/** `dir`'s SKILL.md, whose front matter must name the skill `name` (its folder's, or the one it stands for). */
async function parseOutcome(
  dir: string,
  name: string,
  source: SkillSource,
  stats: Stats,
  text: () => Promise<string>,
) {
  if (!stats.isFile()) return { ok: false as const, reason: `${SKILL_FILE} is not a regular file` };
  if (stats.size > SKILL_FILE_MAX_BYTES)
    return { ok: false as const, reason: `${SKILL_FILE} is larger than ${SKILL_FILE_MAX_BYTES / 1024} KB` };
  let parsed: ParsedSkillFile;
  try {
    parsed = parseSkillFile(await text(), name);
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
  /** The last scan's problems with source folders (problemKey each, one a line). */
  private folderProblems = "";
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
        continue;
      }
      for (const item of listed ?? []) {
        if (item.entry !== this.cache.get(item.file)) changed = true;
        found.push(item);
      }
    }
    const withFile = found.filter((item) => item.entry !== undefined).length;
    const folderProblems = problems.map(problemKey).join("\n");
    if (!changed && this.last && withFile === this.cache.size && folderProblems === this.folderProblems)
      return this.last;
    this.folderProblems = folderProblems;
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

  /**
   * The skill folders in the open source folder, each with its SKILL.md's cache entry; in the
   * workspace, a skill save_skill is replacing, moved aside while its new folder is renamed into
   * place, counts under its own name (asideSkillName).
   */
  private async readFolder(folder: SkillFolder, source: SkillSource): Promise<FoundSkill[]> {
    const found: FoundSkill[] = [];
    const present = new Set(folder.entries.map((item) => item.name));
    for (const item of folder.entries) {
      if (!(item.isDirectory() || item.isSymbolicLink())) continue;
      const hidden = item.name.startsWith(".");
      const name = !hidden
        ? item.name
        : source.kind === "workspace"
          ? asideSkillName(item.name, present)
          : undefined;
      if (name === undefined) continue;
      const file = path.join(source.dir, item.name, SKILL_FILE);
      const entry = await this.read(file, name, source, folder, item);
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
   * size, modification and change times. That is looked at first with a plain stat, which may
   * follow a link the agent planted since; but a link leads to another inode, and the inode read
   * before holds what was read. Only a changed file is opened again, from the source folder the
   * scan holds open (for the workspace, following no link: a full rescan of 200 skills opened
   * every one, 37 ms). A refusal is kept the same way, for the file that plain stat showed before
   * the attempt, so a refused or unreadable file is not opened again (nor the catalog rebuilt) on
   * every scan until it changes; not a refusal because the path changed while it was being
   * opened, a race that says nothing about the file. A refusal that cannot be keyed is the
   * cached entry again when its reason is the same, so the scan stays the same.
   */
  private async read(
    file: string,
    name: string,
    source: SkillSource,
    folder: SkillFolder,
    item: Dirent,
  ): Promise<CacheEntry | undefined> {
    const current = statOrNothing(file);
    const cached = this.cache.get(file);
    if (cached && isSameFile(current, cached)) return cached;
    try {
      return await folder.withSkillFile(item, async (stats, text) => {
        if (cached && isSameFile(stats, cached)) return cached;
        return {
          key: keyOf(stats),
          outcome: await parseOutcome(path.dirname(file), name, source, stats, text),
        };
      });
    } catch (error) {
      const reason = failureReason(error, "unreadable");
      if (cached && cached.key === undefined && !cached.outcome.ok && cached.outcome.reason === reason)
        return cached;
      const key = current && !isLinkRefusal(error) ? keyOf(current) : undefined;
      return { key, outcome: { ok: false, reason } };
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

/** The key of the file `stats` are of. */
function keyOf(stats: Stats): FileKey {
  const { dev, ino, size, mtimeMs, ctimeMs } = stats;
  return { dev, ino, size, mtimeMs, ctimeMs };
}

/** Whether `stats` are those of the file `entry` is of, unchanged since. */
function isSameFile(stats: Stats | undefined, entry: CacheEntry): boolean {
  const key = entry.key;
  return (
    stats !== undefined &&
    key !== undefined &&
    stats.dev === key.dev &&
    stats.ino === key.ino &&
    stats.size === key.size &&
    stats.mtimeMs === key.mtimeMs &&
    stats.ctimeMs === key.ctimeMs
  );
}
