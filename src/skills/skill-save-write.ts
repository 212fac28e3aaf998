/**
 * The write of a planned save (skill-save-plan.ts), so that no link, swap or failure leaves the
 * workspace holding anything but the old skill or the whole new one. The skill's folder is written
 * beside its destination (a staging folder) and renamed into place, so a failed save leaves no
 * half-written skill; a replace that fails once the old folder is moved aside puts it back (or,
 * when that fails too, leaves the staging folder, beside which the loader serves it). Everything
 * goes relative to folders held open, following no link (anchored-fs.ts), so a command of another
 * session swapping a folder for a link meanwhile cannot send a write or a rename out of the
 * workspace. A folder is removed without following a link in it (AnchoredDir.removeDir); once the
 * new skill is in place the save is done, so a folder it then fails to remove is logged and left.
 * What a process that died mid-save left, and such folders, are cleaned up before the next
 * library's first scan (skill-save-leftovers.ts). The folders' names are skill-save-folders.ts.
 */
import { randomBytes } from "node:crypto";
import { mkdir, rename } from "node:fs/promises";
import path from "node:path";
import { SKILL_FILE } from "../core/workspace-layout.js";
import type { Logger } from "../logging/logger.js";
import { writeChecked } from "../tools/files/anchored-fs.js";
import type { WorkspacePaths } from "../tools/files/workspace-paths.js";
import { asideSkillFolder, stagingSkillFolder } from "./skill-save-folders.js";
import type { SavePlan } from "./skill-save-plan.js";
import { openSkillsFolder, skillFolderAt } from "./skill-save-target.js";

/**
 * The mode bits a bundled file is created with, less the umask (0o755 and 0o644 under the usual
 * 022): a script copied from an executable file is executable from its creation on, so no later
 * open of it by path sets the bits.
 */
const SCRIPT_MODE = 0o777;
const FILE_MODE = 0o666;

/**
 * Write the skill's folder beside its destination, then rename it into place. The skills folder
 * is confined and opened once (made when missing, each folder relative to the one above it), the
 * staging folder made and opened relative to it, and every file written relative to that open
 * staging folder (writeChecked walks from its handle), following no link; the renames name the
 * skills folder by its handle. The skill's folder must still be the one planned (or still be
 * missing): the save replaces only what the card said it would. Once the new folder is renamed
 * into place the save is done: the staging or old folder it then fails to remove is logged and
 * left to the cleanup at the next start, never made a failed save; so is the staging folder of a
 * save that failed, whose own error is the one thrown.
 */
export async function writeSkill(
  paths: WorkspacePaths,
  plan: SavePlan,
  logger: Pick<Logger, "warn"> | undefined,
): Promise<void> {
  const tag = randomBytes(4).toString("hex");
  const name = plan.document.name;
  const skillsDir = path.dirname(plan.shownDir);
  const staging = stagingSkillFolder(name, tag);
  // SKILL.md goes last, so a staging folder with one holds every file of the skill.
  const writes = [
    ...plan.files.map((file) => ({ ...file, mode: file.executable ? SCRIPT_MODE : FILE_MODE })),
    { path: SKILL_FILE, content: plan.skillFile, mode: FILE_MODE },
  ];
  await mkdir(paths.root, { recursive: true });
  const parent = await openSkillsFolder(paths, skillsDir);
  /** Remove the save's `folder`, logging a failure (skill-save-leftovers.ts removes it at the next start). */
  const removeLeft = (folder: string) =>
    parent.removeDir(folder, path.join(skillsDir, folder)).catch((error: unknown) => {
      logger?.warn(
        { skill: name, folder: path.join(skillsDir, folder), err: error },
        "skills: save_skill could not remove its folder; the cleanup at the next start will",
      );
    });
  // Set when the old skill could not be put back: its aside folder is served only beside this staging folder.
  let keepStaging = false;
  try {
    // The skill's folder is the one planned, still no link: what the save replaces is that folder.
    const found = await skillFolderAt(parent.child(name), plan.shownDir);
    if (found?.dev !== plan.existing?.dev || found?.ino !== plan.existing?.ino)
      throw new Error(
        `${plan.shownDir} changed since the save was planned (another command made or replaced it)`,
      );
    try {
      const folder = await parent.openDir(staging, path.join(skillsDir, staging), true);
      try {
        for (const file of writes) {
          const display = path.join(skillsDir, staging, file.path);
          await writeChecked({ dir: folder, relative: file.path, display }, file.content, file.mode);
        }
      } finally {
        await folder.close();
      }
      if (plan.existing) {
        // Until the new folder is in place the loader reads the old one under its aside name (while
        // the staging folder of the same tag is there).
        const old = asideSkillFolder(name, tag);
        await rename(parent.child(name), parent.child(old));
        try {
          await rename(parent.child(staging), parent.child(name));
        } catch (error) {
          // The save failed: the old skill goes back under its name before the staging folder goes.
          await rename(parent.child(old), parent.child(name)).catch(() => {
            keepStaging = true;
          });
          throw error;
        }
        await removeLeft(old);
      } else await rename(parent.child(staging), parent.child(name));
    } finally {
      if (!keepStaging) await removeLeft(staging);
    }
  } finally {
    await parent.close();
  }
}
