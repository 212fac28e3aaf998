/**
 * SkillSourceAccess: how the loader and the skill tools reach the files of one skill source — the
 * folders in it, each folder's SKILL.md, and the files beside it. There are two: the operator's
 * folders (the data dir's, `skills.dirs`) are read with plain file calls, links followed
 * (operator-skill-access.ts); the workspace's folder, which the agent's commands can change, is
 * read without following a link anywhere on the way (workspace-skill-access.ts). What both share
 * lives here: the interface and the listing of the files beside a skill.
 */
import type { Dirent, Stats } from "node:fs";
import { type AnchoredDir, NotRegularFileError, UnsafeFileError } from "../tools/files/anchored-fs.js";
import { SKILL_FILE } from "../core/workspace-layout.js";

/** Most files listed beside one skill. */
const SKILL_FILES_MAX = 200;

/**
 * Most folders opened to list them, the skill's own included. The walk holds every folder above
 * the one it lists open, with its path: a workspace skill's folder nested 20,000 deep by the
 * agent's commands (no path length stops a walk relative to open folders) took the process past
 * its heap limit.
 */
const SKILL_FOLDERS_MAX = 100;

/** The files of one skill source; every skill is named by its folder's name in the source. */
export interface SkillSourceAccess {
  /**
   * Run `use` on the source folder, held open meanwhile, so that a scan lists it once and opens
   * each SKILL.md from it; undefined when the folder is missing. Throws when it cannot be read or
   * is refused.
   */
  withFolder<T>(use: (folder: SkillFolder) => Promise<T>): Promise<T | undefined>;
  /**
   * The files beside the SKILL.md of the folder `name`, relative to it, sorted (at most
   * SKILL_FILES_MAX, from at most SKILL_FOLDERS_MAX folders; dot-files and links are left out);
   * none when the folder cannot be read.
   */
  filesBeside(name: string): Promise<string[]>;
  /** The text of `file` (relative to the folder `name`, never outside it), at most `maxBytes`. */
  readBeside(name: string, file: string, maxBytes: number): Promise<string>;
}

/** A source folder as one scan goes through it (SkillSourceAccess.withFolder). */
export interface SkillFolder {
  /** Its entries (names and types; a link is reported as a link). */
  readonly entries: readonly Dirent[];
  /** Whether the entry is a folder (a link is followed as far as the source allows). */
  isFolder(entry: Dirent): Promise<boolean>;
  /**
   * Run `use` on the SKILL.md of the folder `entry`, held open meanwhile: `use` gets its stats
   * and reads its text only if it wants it. Undefined when the folder has none; throws when the
   * file is refused or cannot be opened.
   */
  withSkillFile<T>(
    entry: Dirent,
    use: (stats: Stats, text: () => Promise<string>) => Promise<T>,
  ): Promise<T | undefined>;
}

/**
 * Whether `error` is anchored-fs's refusal of a link where it follows none: one at the name it
 * opened, or one swapped in on the way while it was in use (a pipe or device refused is not one).
 */
export function isLinkRefusal(error: unknown): boolean {
  return error instanceof UnsafeFileError && !(error instanceof NotRegularFileError);
}

/**
 * The files below the folder `open` opens, as SkillSourceAccess.filesBeside lists them; none
 * when it cannot be opened. Sub-folders are opened relative to their parent, following no link.
 */
export async function filesIn(open: () => Promise<AnchoredDir>): Promise<string[]> {
  const top = await open().catch(() => undefined);
  if (top === undefined) return [];
  const found: string[] = [];
  let folders = 1;
  const walk = async (dir: AnchoredDir, relative: string): Promise<void> => {
    const entries = await dir.entries().catch(() => []);
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (found.length >= SKILL_FILES_MAX) return;
      if (entry.name.startsWith(".")) continue;
      const child = relative ? `${relative}/${entry.name}` : entry.name;
      if (entry.isFile()) {
        if (child !== SKILL_FILE) found.push(child);
        continue;
      }
      if (!entry.isDirectory() || folders >= SKILL_FOLDERS_MAX) continue;
      folders += 1;
      const sub = await dir.openDir(entry.name, child).catch(() => undefined);
      if (sub === undefined) continue;
      try {
        await walk(sub, child);
      } finally {
        await sub.close();
      }
    }
  };
  try {
    await walk(top, "");
  } finally {
    await top.close();
  }
  return found;
}
