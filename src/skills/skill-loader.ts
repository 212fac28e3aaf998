/**
 * SkillLoader: finds the skills in their sources — `<workspace>/.coworker/skills`,
 * `<data dir>/skills`, then each folder in `skills.dirs` — where a later source shadows an
 * earlier one of the same name. Every scan re-reads the folders (so a skill added, changed or
 * removed counts from the next turn), but a SKILL.md whose modification time and size are
 * unchanged is not read or parsed again, which keeps a per-turn scan of hundreds of skills well
 * under a millisecond or two. Scanning is synchronous because the per-turn context is built
 * synchronously. A malformed skill never throws: it is reported with its file and reason, and
 * does not shadow a valid skill of the same name from an earlier source.
 */
import { type Dirent, readdirSync, readFileSync, statSync } from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { deepFreeze } from "../engine/deep-freeze.js";
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
  readonly parsed: ParsedSkillFile;
}

function errorCode(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "code" in error ? String(error.code) : undefined;
}

function entriesOf(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    if (errorCode(error) === "ENOENT" || errorCode(error) === "ENOTDIR") return [];
    throw error;
  }
}

/** Loads skills from their sources (see the module header). */
export class SkillLoader {
  private readonly cache = new Map<string, CacheEntry>();

  constructor(readonly sources: readonly SkillSource[]) {}

  /** Scan every source now. Never throws for a bad skill; an unreadable source becomes a problem. */
  scan(): SkillScan {
    const skills = new Map<string, Skill>();
    const problems: SkillProblem[] = [];
    const shadowed: { name: string; hidden: string; by: string }[] = [];
    const seen = new Set<string>();
    for (const source of this.sources) {
      let entries: Dirent[];
      try {
        entries = entriesOf(source.dir);
      } catch (error) {
        problems.push({ file: source.dir, reason: `unreadable folder: ${String(error)}`, source });
        continue;
      }
      for (const entry of entries) {
        if (entry.name.startsWith(".") || !(entry.isDirectory() || entry.isSymbolicLink())) continue;
        const dir = path.join(source.dir, entry.name);
        const file = path.join(dir, SKILL_FILE);
        seen.add(file);
        const parsed = this.read(file, dir);
        if (parsed === undefined) continue;
        if (!parsed.ok) {
          problems.push({ file, reason: parsed.reason, source });
          continue;
        }
        const earlier = skills.get(parsed.document.name);
        if (earlier) shadowed.push({ name: earlier.name, hidden: earlier.dir, by: dir });
        skills.set(parsed.document.name, { ...parsed.document, dir, source });
      }
    }
    for (const key of this.cache.keys()) if (!seen.has(key)) this.cache.delete(key);
    return deepFreeze({ skills, problems, shadowed });
  }

  /** The parsed SKILL.md, from the cache when unchanged; undefined for a folder that is not a skill. */
  private read(file: string, dir: string): ParsedSkillFile | undefined {
    let stats: ReturnType<typeof statSync>;
    try {
      stats = statSync(file);
    } catch (error) {
      if (errorCode(error) !== "ENOENT") return { ok: false, reason: `unreadable: ${String(error)}` };
      try {
        if (!statSync(dir).isDirectory()) return undefined;
      } catch {
        return undefined;
      }
      return { ok: false, reason: `the folder has no ${SKILL_FILE}` };
    }
    const cached = this.cache.get(file);
    if (cached && cached.mtimeMs === stats.mtimeMs && cached.size === stats.size) return cached.parsed;
    let parsed: ParsedSkillFile;
    if (!stats.isFile()) parsed = { ok: false, reason: `${SKILL_FILE} is not a regular file` };
    else if (stats.size > SKILL_FILE_MAX_BYTES)
      parsed = { ok: false, reason: `${SKILL_FILE} is larger than ${SKILL_FILE_MAX_BYTES / 1024} KB` };
    else {
      try {
        parsed = parseSkillFile(readFileSync(file, "utf8"), path.basename(dir));
      } catch (error) {
        parsed = { ok: false, reason: `unreadable: ${String(error)}` };
      }
    }
    this.cache.set(file, { mtimeMs: stats.mtimeMs, size: stats.size, parsed });
    return parsed;
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
