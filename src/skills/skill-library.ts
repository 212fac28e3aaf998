/**
 * SkillLibrary: the skills of one workspace as the rest of the app asks about them — the loader's
 * latest scan joined with the on/off switches, and a skill's files read the way its source is
 * read. A scan is asked for first (it reads the disk, so it is asynchronous) and the queries
 * answer from it. A scan is reused for `scanIntervalMs` (default 1 s), so the several model
 * calls of one turn share one while each new message sees skills added, edited or removed since;
 * whoever asks while a scan is being made shares that one. Each scan re-reads the stored switches
 * of the skills it found, so a switch made by another process holds from the next scan on; one
 * made here applies at once. A save through save_skill drops the scan (also one still being made,
 * so the next query makes a new one). The catalog text is kept until the scan or the switches
 * change. Before its first scan a library runs `beforeFirstScan` once (the app's: the cleanup of
 * what interrupted saves left in the workspace, skill-save-leftovers.ts), so that scan finds the
 * skills as those saves meant them.
 */
import { COWORKER_FOLDER, SKILLS_FOLDER } from "../core/workspace-layout.js";
import path from "node:path";
import type { SkillLoader, SkillScan } from "./skill-loader.js";
import type { SkillSwitches } from "./skill-switches.js";
import type { Skill, SkillSource, SkillSourceKind } from "./skill.js";
import { catalogText, DEFAULT_CATALOG_BUDGET_TOKENS } from "./skill-catalog.js";

/** A skill with its current switch state. */
export interface SkillEntry {
  readonly skill: Skill;
  readonly enabled: boolean;
}

/**
 * Where a skill of some name stands for the workspace: no source has a usable one, the one used
 * comes from the data dir or `skills.dirs` (hiding any workspace skill of that name), or the
 * workspace's own is used, on or off.
 */
export type SkillStanding =
  | { readonly kind: "missing" }
  | { readonly kind: "operator"; readonly source: SkillSourceKind }
  | { readonly kind: "workspace"; readonly enabled: boolean };

/** What a library is built from. */
export interface SkillLibraryOptions {
  readonly loader: SkillLoader;
  readonly switches: SkillSwitches;
  /** The workspace root (absolute): save_skill writes below it, read_file reaches skills inside it. */
  readonly workspaceRoot: string;
  /** Catalog budget in approximate tokens (default 2,000). */
  readonly catalogBudgetTokens?: number;
  /** How long a scan is reused, in ms (default 1,000; 0 rescans on every query). */
  readonly scanIntervalMs?: number;
  readonly now?: () => number;
  /** Run once before the first scan (see the module header); never rejects. */
  readonly beforeFirstScan?: () => Promise<void>;
}

/** Default time a scan is reused. */
export const DEFAULT_SCAN_INTERVAL_MS = 1_000;

/** The folder of the team's skills inside a workspace. */
export function workspaceSkillsDir(workspaceRoot: string): string {
  return path.join(workspaceRoot, COWORKER_FOLDER, SKILLS_FOLDER);
}

/**
 * The sources in shadowing order: the workspace's skills, the data dir's, then `skills.dirs`
 * (a later one shadows an earlier one of the same name).
 */
export function skillSources(workspaceRoot: string, dataDir: string, dirs: readonly string[]): SkillSource[] {
  return [
    { kind: "workspace", dir: workspaceSkillsDir(workspaceRoot), confinedTo: workspaceRoot },
    { kind: "data", dir: path.join(dataDir, "skills") },
    ...dirs.map((dir): SkillSource => ({ kind: "configured", dir: path.resolve(dir) })),
  ];
}

/** The workspace's skills and their switches (see the module header). */
export class SkillLibrary {
  readonly workspaceRoot: string;
  readonly catalogBudgetTokens: number;
  private lastScan: { readonly scan: SkillScan; readonly at: number } | undefined;
  /** The scan being made, for every query meanwhile; an invalidation drops it. */
  private pending: Promise<SkillScan> | undefined;
  /** The run of `beforeFirstScan`, every scan after it. */
  private prepared: Promise<void> | undefined;
  private lastCatalog:
    | { readonly scan: SkillScan; readonly version: number; readonly text: string | undefined }
    | undefined;

  constructor(private readonly options: SkillLibraryOptions) {
    this.workspaceRoot = path.resolve(options.workspaceRoot);
    this.catalogBudgetTokens = options.catalogBudgetTokens ?? DEFAULT_CATALOG_BUDGET_TOKENS;
  }

  /** The switches, for commands that change them. */
  get switches(): SkillSwitches {
    return this.options.switches;
  }

  /** The current scan of every source (see the module header). */
  async scan(): Promise<SkillScan> {
    const now = (this.options.now ?? Date.now)();
    const interval = this.options.scanIntervalMs ?? DEFAULT_SCAN_INTERVAL_MS;
    if (this.lastScan && now - this.lastScan.at < interval) return this.lastScan.scan;
    this.pending ??= this.startScan(now);
    return this.pending;
  }

  /** Forget the last scan: the next one reads the sources (after save_skill wrote a skill). */
  invalidate(): void {
    this.pending = undefined;
    this.lastScan = undefined;
    this.options.loader.invalidate();
  }

  /** A new scan, begun at `now`: kept as the last one unless an invalidation dropped it meanwhile. */
  private startScan(now: number): Promise<SkillScan> {
    const pending: Promise<SkillScan> = this.loaderScan()
      .then(async (scan) => {
        await this.options.switches.refresh([...scan.skills.keys()]);
        if (this.pending === pending) this.lastScan = { scan, at: now };
        return scan;
      })
      .finally(() => {
        if (this.pending === pending) this.pending = undefined;
      });
    return pending;
  }

  /** The loader's scan, once `beforeFirstScan` has run. */
  private loaderScan(): Promise<SkillScan> {
    const before = this.options.beforeFirstScan;
    if (before === undefined) return this.options.loader.scan();
    this.prepared ??= before();
    return this.prepared.then(() => this.options.loader.scan());
  }

  /** The catalog of the enabled skills within the budget; undefined when none is enabled. */
  catalog(scan: SkillScan): string | undefined {
    const version = this.options.switches.version;
    const last = this.lastCatalog;
    if (last && last.scan === scan && last.version === version) return last.text;
    const text = catalogText(this.enabled(scan), this.catalogBudgetTokens);
    this.lastCatalog = { scan, version, text };
    return text;
  }

  /** Every usable skill with its state, sorted by name. */
  entries(scan: SkillScan): SkillEntry[] {
    return [...scan.skills.values()]
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((skill) => ({ skill, enabled: this.options.switches.isEnabled(skill.name) }));
  }

  /** The skills that are on now, sorted by name. */
  enabled(scan: SkillScan): Skill[] {
    return this.entries(scan)
      .filter((entry) => entry.enabled)
      .map((entry) => entry.skill);
  }

  /** The named skill and its state, or undefined when no source has a usable one. */
  find(name: string, scan: SkillScan): SkillEntry | undefined {
    const skill = scan.skills.get(name);
    return skill && { skill, enabled: this.options.switches.isEnabled(name) };
  }

  /** Where the skill `name` stands now (see SkillStanding), from the current scan. */
  async standingOf(name: string): Promise<SkillStanding> {
    const entry = this.find(name, await this.scan());
    if (!entry) return { kind: "missing" };
    if (entry.skill.source.kind !== "workspace") return { kind: "operator", source: entry.skill.source.kind };
    return { kind: "workspace", enabled: entry.enabled };
  }

  /** The files beside a skill's SKILL.md, relative to its folder (see SkillSourceAccess.filesBeside). */
  filesBeside(skill: Skill): Promise<string[]> {
    return this.options.loader.accessTo(skill.source).filesBeside(path.basename(skill.dir));
  }

  /** The text of `file` beside a skill's SKILL.md (never outside its folder), at most `maxBytes`. */
  readBeside(skill: Skill, file: string, maxBytes: number): Promise<string> {
    return this.options.loader.accessTo(skill.source).readBeside(path.basename(skill.dir), file, maxBytes);
  }

  /** Whether a skill's folder lies inside the workspace (so read_file can reach its files). */
  inWorkspace(skill: Pick<Skill, "dir">): boolean {
    const relative = path.relative(this.workspaceRoot, skill.dir);
    return relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative);
  }
}
