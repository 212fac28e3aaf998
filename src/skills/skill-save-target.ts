/**
 * Where save_skill writes: the workspace's skills folder, confined like a file tool's path, and
 * the skill's folder `<skills folder>/<name>` in it, each looked at as a name, never followed. A
 * link where the skill's folder goes is refused, not written through: moving aside and removing a
 * link's target would wipe whatever folder it points to; anything else that is not a folder is
 * refused too, and so is a skills folder that is a file (or has one on its way). The plan looks by
 * path (skill-save-plan.ts); the write looks again through the skills folder it holds open and
 * saves only over the folder planned (skill-save-write.ts). One place for both looks, so they
 * refuse alike.
 */
import { lstat } from "node:fs/promises";
import path from "node:path";
import { errorCode } from "../core/missing-file.js";
import { type AnchoredDir, openCheckedDir } from "../tools/files/anchored-fs.js";
import type { FileIdentity, WorkspacePaths } from "../tools/files/workspace-paths.js";

/**
 * The skill's folder, at `entry` (its name in the skills folder: a path, or a child of the skills
 * folder held open), shown as `shown`, looked at without following it: its identity, undefined
 * when it is missing. A link, or anything but a folder, is refused, and so is a skills folder that
 * is a file.
 */
export async function skillFolderAt(entry: string, shown: string): Promise<FileIdentity | undefined> {
  const stats = await lstat(entry).catch((error: unknown) => {
    if (errorCode(error) === "ENOENT") return undefined;
    if (errorCode(error) === "ENOTDIR") throw notAFolder(path.dirname(shown));
    throw error;
  });
  if (stats === undefined) return undefined;
  if (stats.isSymbolicLink())
    throw new Error(
      `${shown} is a symbolic link, not a skill's folder; save_skill never writes through one (remove the link, or save under another name)`,
    );
  if (!stats.isDirectory())
    throw new Error(
      `${shown} is not a folder; save_skill will not replace it (remove it, or save under another name)`,
    );
  return { dev: stats.dev, ino: stats.ino };
}

/**
 * The skills folder `skillsDir` (as shown: relative to the workspace root, or absolute in another
 * root), confined, held open and made when missing, each folder relative to the one above it; a
 * file there is refused. The caller closes it.
 */
export async function openSkillsFolder(paths: WorkspacePaths, skillsDir: string): Promise<AnchoredDir> {
  try {
    return await openCheckedDir(await paths.resolve(skillsDir), { create: true });
  } catch (error) {
    if (errorCode(error) === "ENOTDIR") throw notAFolder(skillsDir);
    throw error;
  }
}

/** The refusal of a skills folder that is a file (or has one on its way): no skill is saved in it. */
function notAFolder(shownSkills: string): Error {
  return new Error(
    `${shownSkills} is not a folder (it, or a folder on its way, is a file), so no skill can be saved in it; remove the file, or move it away`,
  );
}
