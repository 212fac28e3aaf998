/**
 * load_skill {name, file?}: bring an enabled skill's instructions into the conversation — its
 * body and the list of files beside it. Skills inside the workspace list their files as workspace
 * paths for read_file; a skill elsewhere (data dir, skills.dirs) is readable only through this
 * tool, read-only, by passing `file`. A read: it never needs approval. A workspace skill is read
 * as no conversation sees the workspace, so never from uploads/ (workspace-skill-access.ts).
 */
import { z } from "zod";
import { defineTool, fail, ok } from "../core/tool.js";
import { LOAD_SKILL } from "./skill-context.js";
import type { SkillLibrary } from "./skill-library.js";
import type { SkillScan } from "./skill-loader.js";
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

function unknownSkill(library: SkillLibrary, scan: SkillScan, name: string): string {
  const names = library.enabled(scan).map((skill) => skill.name);
  const known = names.length > 0 ? ` Enabled skills: ${names.join(", ")}.` : " No skills are enabled.";
  return `There is no enabled skill named "${name}".${known}`;
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
      const scan = await library.scan();
      const entry = library.find(args.name, scan);
      if (!entry?.enabled) return fail(unknownSkill(library, scan, args.name));
      const { skill } = entry;
      if (args.file !== undefined) {
        try {
          return ok(await library.readBeside(skill, args.file, SKILL_ASSET_MAX_BYTES));
        } catch (error) {
          return fail(
            `Cannot read ${args.file} of the skill "${skill.name}": ${error instanceof Error ? error.message : String(error)}`,
          );
        }
      }
      const files = await library.filesBeside(skill);
      return ok(loadedSkillText(skill, files, library.workspaceRoot, library.inWorkspace(skill)));
    },
  });
}
