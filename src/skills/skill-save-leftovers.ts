/**
 * The cleanup of what a save_skill whose process died (crashed, was killed) left in the
 * workspace's skills folder: its staging folder (the new skill, written beside its destination)
 * and its aside folder (the old skill, moved away while the new one is renamed into place). It
 * runs once, before a library's first scan (skill-library.ts), and touches only folders named as a
 * save names them (skill-save-folders.ts), older than LEFTOVER_GRACE_MS, of skills with no such
 * folder younger than that (a save of the skill may be under way in another process: its renames
 * must not meet a leftover of an older save renamed into its place):
 * - an aside folder the loader serves (asideSkillName: its staging folder of the same tag is
 *   there, the skill's own folder is not) is put back under the skill's name, as a failed replace
 *   does, and that staging folder removed: the skill stays the one that was served;
 * - every other staging or aside folder is removed.
 * A staging folder is never completed into place, nor an aside folder the loader does not serve
 * put back: the cleanup cannot tell a skill never installed from one deleted since (an operator
 * who removed a skill after its replace died would see it come back, unapproved), nor a staging
 * folder a version that wrote SKILL.md first left without its bundled files from a whole one. So
 * nothing is installed or brought back that is not what the loader was serving. The person whose
 * save died was told: the tool-call journal answers a call that started and never finished as
 * interrupted (turn-engine.ts resume), and they save again. Nothing is followed: the skills folder
 * is confined to the workspace and held open as the loader opens it (workspace-skill-access.ts
 * openWorkspaceSkillFolder, by the anchored walk of anchored-fs.ts), a leftover is judged by lstat
 * through that handle (one that is not a real folder — a link — is left alone), and it is removed
 * by AnchoredDir.removeDir, which removes a link inside as a link. Each folder put back or removed
 * is logged.
 */
import { lstat, rename } from "node:fs/promises";
import { isMissing } from "../core/missing-file.js";
import type { Logger } from "../logging/logger.js";
import type { AnchoredDir } from "../tools/files/anchored-fs.js";
import { asideSkillFolder, asideSkillName, parseSaveFolder, type SaveFolder } from "./skill-save-folders.js";
import type { SkillSource } from "./skill.js";
import { type OpenedSkillFolder, openWorkspaceSkillFolder } from "./workspace-skill-access.js";

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
 * Put back or remove the leftovers of saves in each workspace source of `sources` (the
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
  let opened: OpenedSkillFolder;
  try {
    opened = await openWorkspaceSkillFolder(source, { root, offLimits: options.offLimits });
  } catch (error) {
    if (!isMissing(error))
      options.logger?.warn(
        { dir: source.dir, err: error },
        "skills: could not look for leftovers of save_skill",
      );
    return;
  }
  const { dir: skills, resolved } = opened;
  try {
    await clearIn(skills, resolved.display, options);
  } catch (error) {
    options.logger?.warn({ dir: source.dir, err: error }, "skills: could not clear leftovers of save_skill");
  } finally {
    await skills.close().catch(() => undefined);
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
  /** Whether the aside folder `folder` is there and the loader serves it (asideSkillName). */
  const served = (folder: string) => present.has(folder) && asideSkillName(folder, present) !== undefined;
  for (const leftover of leftovers) {
    if (leftover.kind !== "aside" || !served(leftover.folder)) continue;
    try {
      await rename(skills.child(leftover.folder), skills.child(leftover.name));
    } catch (error) {
      log(leftover, "could not put back the skill an interrupted save_skill had moved aside", error);
      continue;
    }
    present.delete(leftover.folder);
    present.add(leftover.name);
    log(leftover, "put back the skill an interrupted save_skill had moved aside");
  }
  for (const leftover of leftovers) {
    // An aside folder still served (its putting back failed) stays, and so does its staging folder
    // it is served beside: the next start tries again.
    const aside = leftover.kind === "aside" ? leftover.folder : asideSkillFolder(leftover.name, leftover.tag);
    if (!present.has(leftover.folder) || served(aside)) continue;
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
