/**
 * The skill sources the operator set up — the data dir's `skills` folder and each of `skills.dirs`
 * — read with plain file calls. Nothing the agent runs can write there, so links in them are
 * followed as the operator made them; only a file beside a skill is still confined to the skill's
 * folder, since the model names it.
 */
import type { Dirent, Stats } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { AnchoredDir } from "../tools/files/anchored-fs.js";
import { readTextFile } from "../tools/files/text-file.js";
import { createWorkspacePaths } from "../tools/files/workspace-paths.js";
import { isMissing } from "../core/missing-file.js";
import { filesIn, type SkillFolder, type SkillSourceAccess } from "./skill-source-access.js";
import { SKILL_FILE } from "../core/workspace-layout.js";
import type { SkillSource } from "./skill.js";

/** The access to an operator's skill source (see the module header). */
export function operatorSkillAccess(source: SkillSource): SkillSourceAccess {
  const folder = (name: string) => path.join(source.dir, name);
  return Object.freeze({
    async withFolder<T>(use: (folder: SkillFolder) => Promise<T>): Promise<T | undefined> {
      let entries: Dirent[];
      try {
        entries = await readdir(source.dir, { withFileTypes: true });
      } catch (error) {
        if (isMissing(error)) return undefined;
        throw error;
      }
      return use(
        Object.freeze({
          entries,
          async isFolder(entry: Dirent): Promise<boolean> {
            if (entry.isDirectory()) return true;
            return (await stat(folder(entry.name)).catch(() => undefined))?.isDirectory() ?? false;
          },
          async withSkillFile<U>(
            entry: Dirent,
            read: (stats: Stats, text: () => Promise<string>) => Promise<U>,
          ): Promise<U | undefined> {
            const file = path.join(folder(entry.name), SKILL_FILE);
            const stats = await stat(file).catch((error: unknown) => {
              if (isMissing(error)) return undefined;
              throw error;
            });
            return stats && read(stats, () => readFile(file, "utf8"));
          },
        }),
      );
    },
    filesBeside(name: string): Promise<string[]> {
      return filesIn(() => AnchoredDir.openRoot(folder(name)));
    },
    async readBeside(name: string, file: string, maxBytes: number): Promise<string> {
      const resolved = await createWorkspacePaths({ root: folder(name) }).resolve(file);
      if (resolved.absolute === resolved.root) throw new Error(`"${file}" is not a file beside this skill`);
      return readTextFile(resolved, maxBytes);
    },
  });
}
