/**
 * load_skill {name, file?}: bring an enabled skill's instructions into the conversation — its
 * body and the list of files beside it. Skills inside the workspace list their files as workspace
 * paths for read_file; a skill elsewhere (data dir, skills.dirs) is readable only through this
 * tool, read-only, by passing `file`. A read: it never needs approval.
 */
import { z } from "zod";
import { createWorkspacePaths } from "../tools/files/workspace-paths.js";
import { readTextFile } from "../tools/files/text-file.js";
import { defineTool, fail, ok } from "../core/tool.js";
import { LOAD_SKILL } from "./skill-context.js";
import type { SkillLibrary } from "./skill-library.js";
import { filesBeside } from "./skill-loader.js";
import { loadedSkillText } from "./skill-text.js";

/** Largest file beside a skill that load_skill returns, in bytes. */
export const SKILL_ASSET_MAX_BYTES = 256 * 1024;

const loadSkillSchema = z.object({
  name: z.string().min(1).describe("The skill's name, as the catalog lists it"),
  file: z
    .string()
    .min(1)
    .optional()
    .describe("A file beside the skill (relative to its folder) to read instead of the instructions"),
});

function unknownSkill(library: SkillLibrary, name: string): string {
  const names = library.enabled().map((skill) => skill.name);
  const known = names.length > 0 ? ` Enabled skills: ${names.join(", ")}.` : " No skills are enabled.";
  return `There is no enabled skill named "${name}".${known}`;
}

/** A file beside the skill, through the workspace resolver rooted at the skill's folder (confined, credential rules, swap-safe). */
async function readAsset(dir: string, file: string): Promise<string> {
  const resolved = await createWorkspacePaths({ root: dir }).resolve(file);
  if (resolved.absolute === resolved.root) throw new Error(`"${file}" is not a file beside this skill`);
  return readTextFile(resolved, SKILL_ASSET_MAX_BYTES);
}

/** Build load_skill over the workspace's skill library. */
export function createLoadSkillTool(library: SkillLibrary) {
  return defineTool({
    name: LOAD_SKILL,
    description:
      "Load a skill from the catalog: returns its instructions (follow them) and the files beside it. " +
      "Pass `file` to read one of those files when the skill is outside the workspace.",
    inputSchema: loadSkillSchema,
    category: "read",
    risk: "low",
    concurrent: true,
    label: (args) => (args.file ? `${args.name}/${args.file}` : args.name),
    async execute(args) {
      const entry = library.find(args.name);
      if (!entry?.enabled) return fail(unknownSkill(library, args.name));
      const { skill } = entry;
      if (args.file !== undefined) {
        try {
          return ok(await readAsset(skill.dir, args.file));
        } catch (error) {
          return fail(
            `Cannot read ${args.file} of the skill "${skill.name}": ${error instanceof Error ? error.message : String(error)}`,
          );
        }
      }
      const files = await filesBeside(skill);
      return ok(loadedSkillText(skill, files, library.workspaceRoot, library.inWorkspace(skill)));
    },
  });
}
