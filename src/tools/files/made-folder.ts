/**
 * Open a workspace folder that may not be there yet, for a writer that works inside it relative
 * to its handle (save_skill's skills folder): the folder is confined like a file tool's path
 * (paths.resolve) and held open by the anchored walk, and the folders missing on its way are made,
 * each relative to the open folder above it, following no link. So a folder swapped for a link
 * while it is made cannot take the folder, or what is written in it, out of the workspace.
 */
import path from "node:path";
import { isMissing } from "../../core/missing-file.js";
import { type AnchoredDir, openCheckedDir } from "./anchored-fs.js";
import type { WorkspacePaths } from "./workspace-paths.js";

/**
 * The folder `relative` (to the workspace root), confined and held open, made when missing. Each
 * folder found missing sends the confinement one folder up, to the nearest that is there (the
 * workspace root is). The caller closes the handle.
 */
export async function openMadeFolder(paths: WorkspacePaths, relative: string): Promise<AnchoredDir> {
  const missing: string[] = [];
  let existing = relative;
  let dir: AnchoredDir;
  for (;;) {
    try {
      dir = await openCheckedDir(await paths.resolve(existing));
      break;
    } catch (error) {
      if (!isMissing(error) || existing === ".") throw error;
      missing.unshift(path.basename(existing));
      existing = path.dirname(existing);
    }
  }
  for (const [index, name] of missing.entries()) {
    const shown = path.join(existing, ...missing.slice(0, index + 1));
    const above = dir;
    try {
      dir = await above.openDir(name, shown, true);
    } finally {
      await above.close();
    }
  }
  return dir;
}
