/**
 * The cleanup of what a save_skill whose process died (crashed, was killed) left in the
 * workspace's skills folder: its staging folder (the new skill, written beside its destination)
 * and its aside folder (the old skill, moved away while the new one is renamed into place). It
 * runs once, before a library's first scan (skill-library.ts), and touches only folders named as a
 * save names them (skill-save-folders.ts), older than LEFTOVER_GRACE_MS, of skills with no such
 * folder younger than that (a save of the skill may be under way in another process: its renames
 * must not meet a leftover of an older save renamed into its place):
 * - a staging folder of a skill with no folder in place is completed — renamed into place, the
 *   newest first — when its SKILL.md parses as the loader requires. Its files were written after
 *   a person approved the card, SKILL.md last (save-skill-tool.ts), so such a folder holds the
 *   whole skill they approved: removing it would lose it, and a replace that died between its two
 *   renames meant that skill to take the old one's place;
 * - an aside folder of a skill still not in place (its staging folder had no SKILL.md that loads)
 *   is put back under the skill's name, as a failed replace does: the old skill stays;
 * - then every staging or aside folder whose skill is in place is removed, and so is a staging
 *   folder holding no skill that would load.
 * The aside folder the loader serves beside its staging folder is thus never removed while it is
 * what is served: it goes once the staging folder took its place, or is itself put back. Nothing
 * is followed: the skills folder is confined to the workspace and held open (anchored-fs.ts), a
 * leftover is judged by lstat through that handle (one that is not a real folder — a link — is
 * left alone), its SKILL.md opened following no link, and it is removed by AnchoredDir.removeDir,
 * which removes a link inside as a link. Each folder completed, put back or removed is logged.
 */
import { lstat, rename } from "node:fs/promises";
import path from "node:path";
import { isMissing } from "../core/missing-file.js";
import { SKILL_FILE } from "../core/workspace-layout.js";
import type { Logger } from "../logging/logger.js";
import { type AnchoredDir, openCheckedDir, readUpTo } from "../tools/files/anchored-fs.js";
import { conversationPaths } from "../tools/files/conversation-paths.js";
import { createWorkspacePaths } from "../tools/files/workspace-paths.js";
import { parseOutcome } from "./skill-loader.js";
import { parseSaveFolder, type SaveFolder } from "./skill-save-folders.js";
import type { SkillSource } from "./skill.js";

/**
 * How long a staging or aside folder is left alone after it last changed. Several processes may
 * share a workspace on one volume, and another may be saving the skill right now (no lock tells):
 * a save writes its staging folder and renames the folders within moments of its approval, so a
 * folder unchanged for ten minutes belongs to a save that died. "Changed" is the later of the
 * folder's modification time (a file written in it) and its change time (its rename): an aside
 * folder is the old skill's, renamed, so its modification time can be months old while it is
 * seconds away from removal by the save under way.
 */
export const LEFTOVER_GRACE_MS = 10 * 60_000;

/** What the cleanup of one source is given. */
export interface LeftoverCleanupOptions {
  /** The service's own files, never reached through the workspace (WorkspaceRootsOptions.offLimits). */
  readonly offLimits: readonly string[];
  readonly logger?: Pick<Logger, "warn">;
  readonly now?: () => number;
}

/** A save's folder found in the skills folder, older than the grace period. */
interface Leftover extends SaveFolder {
  /** Its folder's name in the skills folder. */
  readonly folder: string;
  /** When it last changed (modification or change time, the later). */
  readonly changedAt: number;
}

/**
 * Complete, put back or remove the leftovers of saves in each workspace source of `sources` (the
 * ones with `confinedTo`: save_skill writes nowhere else; see the module header). Never rejects:
 * what fails is logged and left.
 */
export async function clearSaveLeftovers(
  sources: readonly SkillSource[],
  options: LeftoverCleanupOptions,
): Promise<void> {
  for (const source of sources)
    if (source.confinedTo !== undefined) await clearSource(source, source.confinedTo, options);
}

async function clearSource(
  source: SkillSource,
  root: string,
  options: LeftoverCleanupOptions,
): Promise<void> {
  const paths = conversationPaths(createWorkspacePaths({ root, offLimits: options.offLimits }), undefined);
  let skills: AnchoredDir;
  let shown: string;
  try {
    const resolved = await paths.resolve(path.relative(paths.root, source.dir));
    skills = await openCheckedDir(resolved);
    shown = resolved.display;
  } catch (error) {
    if (!isMissing(error))
      options.logger?.warn(
        { dir: source.dir, err: error },
        "skills: could not look for leftovers of save_skill",
      );
    return;
  }
  try {
    await clearIn(skills, shown, options);
  } catch (error) {
    options.logger?.warn({ dir: source.dir, err: error }, "skills: could not clear leftovers of save_skill");
  } finally {
    await skills.close();
  }
}

async function clearIn(skills: AnchoredDir, shown: string, options: LeftoverCleanupOptions): Promise<void> {
  const now = (options.now ?? Date.now)();
  const entries = await skills.entries();
  const present = new Set(entries.map((entry) => entry.name));
  const found: Leftover[] = [];
  /** Skills a save may be under way of: one of their save folders changed within the grace period. */
  const busy = new Set<string>();
  for (const entry of entries) {
    const folder = parseSaveFolder(entry.name);
    if (folder === undefined) continue;
    const stats = await lstat(skills.child(entry.name)).catch(() => undefined);
    if (stats === undefined) continue;
    const changedAt = Math.max(stats.mtimeMs, stats.ctimeMs);
    if (now - changedAt < LEFTOVER_GRACE_MS) busy.add(folder.name);
    else if (stats.isDirectory()) found.push({ ...folder, folder: entry.name, changedAt });
  }
  const leftovers = found.filter((leftover) => !busy.has(leftover.name));
  leftovers.sort((a, b) => b.changedAt - a.changedAt);
  const log = (leftover: Leftover, message: string, error?: unknown) =>
    options.logger?.warn(
      {
        skill: leftover.name,
        folder: `${shown}/${leftover.folder}`,
        ...(error === undefined ? {} : { err: error }),
      },
      `skills: ${message}`,
    );
  /** Rename `leftover` into its skill's place (left where it is when that fails). */
  const moveIntoPlace = async (leftover: Leftover, done: string): Promise<void> => {
    try {
      await rename(skills.child(leftover.folder), skills.child(leftover.name));
    } catch (error) {
      log(leftover, "could not rename a folder left by an interrupted save_skill into place", error);
      return;
    }
    present.delete(leftover.folder);
    present.add(leftover.name);
    log(leftover, done);
  };
  /** Leftovers whose skill has no folder in place and whose SKILL.md would not load: removed. */
  const unloadable = new Set<Leftover>();
  for (const leftover of leftovers) {
    if (leftover.kind !== "staging" || present.has(leftover.name)) continue;
    if (!(await loads(skills, leftover, `${shown}/${leftover.folder}`))) unloadable.add(leftover);
    else await moveIntoPlace(leftover, "completed the skill an interrupted save_skill had written");
  }
  for (const leftover of leftovers)
    if (leftover.kind === "aside" && !present.has(leftover.name))
      await moveIntoPlace(leftover, "put back the skill an interrupted save_skill had moved aside");
  for (const leftover of leftovers) {
    if (!present.has(leftover.folder) || !(present.has(leftover.name) || unloadable.has(leftover))) continue;
    try {
      await skills.removeDir(leftover.folder, `${shown}/${leftover.folder}`);
    } catch (error) {
      log(leftover, "could not remove a folder left by an interrupted save_skill", error);
      continue;
    }
    present.delete(leftover.folder);
    log(leftover, "removed a folder left by an interrupted save_skill");
  }
}

/** Whether the staging folder's SKILL.md parses as the loader requires, opened following no link. */
async function loads(skills: AnchoredDir, staging: Leftover, shown: string): Promise<boolean> {
  try {
    const folder = await skills.openDir(staging.folder, shown);
    try {
      const { handle, stats } = await folder.openFile(SKILL_FILE, `${shown}/${SKILL_FILE}`);
      try {
        const text = async () => new TextDecoder("utf-8").decode(await readUpTo(handle, stats.size));
        const source = { kind: "workspace" as const, dir: skills.absolute };
        const outcome = await parseOutcome(folder.absolute, staging.name, source, stats, text);
        return outcome.ok;
      } finally {
        await handle.close();
      }
    } finally {
      await folder.close();
    }
  } catch {
    return false;
  }
}
