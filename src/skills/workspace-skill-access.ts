/**
 * The workspace's skill source (`.coworker/skills`), read as the service reads any workspace file
 * (service-file-access.ts). The service runs outside the sandbox while the agent's shell can
 * change anything in the workspace: `.coworker`, `skills`, a skill's folder or its SKILL.md may
 * become a link to a host file at any moment, also between a check and the read it allowed. So
 * every path is first confined to the workspace (where it really leads must lie inside; a link
 * within the workspace still works) and then opened by the anchored walk (anchored-fs.ts), one
 * component at a time relative to the folder before and following no link, so a swap after the
 * check is refused instead of followed. The folder is listed through its open handle, and a
 * SKILL.md is stat'ed and read through one open handle, so the loader's cache judges the very
 * file it would read — and only as much of it as was judged: a file grown after its stat is read
 * to the size the stat gave.
 */
import type { Dirent, Stats } from "node:fs";
import path from "node:path";
import { readTextPrefix } from "../engine/session-knowledge.js";
import { type AnchoredDir, openCheckedDir } from "../tools/files/anchored-fs.js";
import { withWorkspaceFile } from "../tools/files/service-file-access.js";
import { readTextFile } from "../tools/files/text-file.js";
import { createWorkspacePaths, isInside } from "../tools/files/workspace-paths.js";
import { isMissing } from "../core/missing-file.js";
import { filesIn, type SkillSourceAccess } from "./skill-source-access.js";
import { SKILL_FILE, type SkillSource } from "./skill.js";

/**
 * The access to the workspace's skill source, confined to `workspace` (its root, and the service's
 * own files off limits inside it; see the module header).
 */
export function workspaceSkillAccess(
  source: SkillSource,
  workspace: { readonly root: string; readonly offLimits: readonly string[] },
): SkillSourceAccess {
  const paths = createWorkspacePaths(workspace);
  /** A path in the source folder, relative to the workspace root. */
  const inSource = (...names: string[]) => path.relative(paths.root, path.join(source.dir, ...names));
  const openFolder = async (relative: string): Promise<AnchoredDir> =>
    openCheckedDir(await paths.resolve(relative));
  return Object.freeze({
    async entries(): Promise<Dirent[]> {
      let dir: AnchoredDir;
      try {
        dir = await openFolder(inSource());
      } catch (error) {
        if (isMissing(error)) return [];
        throw error;
      }
      try {
        return await dir.entries();
      } finally {
        await dir.close();
      }
    },
    async isFolder(entry: Dirent): Promise<boolean> {
      if (entry.isDirectory()) return true;
      const dir = await openFolder(inSource(entry.name)).catch(() => undefined);
      await dir?.close();
      return dir !== undefined;
    },
    async withSkillFile<T>(
      name: string,
      use: (stats: Stats, text: () => Promise<string>) => Promise<T>,
    ): Promise<T | undefined> {
      try {
        return await withWorkspaceFile(paths, inSource(name, SKILL_FILE), (opened, stats) =>
          use(stats, () => readTextPrefix(opened, stats.size)),
        );
      } catch (error) {
        if (isMissing(error)) return undefined;
        throw error;
      }
    },
    filesBeside(name: string): Promise<string[]> {
      return filesIn(() => openFolder(inSource(name)));
    },
    async readBeside(name: string, file: string, maxBytes: number): Promise<string> {
      const folder = await paths.resolve(inSource(name));
      const resolved = await paths.resolve(path.relative(paths.root, path.resolve(source.dir, name, file)));
      if (resolved.absolute === folder.absolute || !isInside(resolved.absolute, folder.absolute))
        throw new Error(`"${file}" is not a file beside this skill`);
      return readTextFile(resolved, maxBytes);
    },
  });
}
