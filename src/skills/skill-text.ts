/**
 * How a loaded skill reads to the model, shared by `load_skill` and a skill run directly: its
 * name, source and description, the instructions, and the files beside it — as workspace paths
 * for `read_file` when the skill lives in the workspace, else as names to pass to `load_skill`.
 */
import path from "node:path";
import type { Skill } from "./skill.js";
import { sourceLabel } from "./skill.js";

/** The full text of a loaded skill. */
export function loadedSkillText(
  skill: Skill,
  files: readonly string[],
  workspaceRoot: string,
  inWorkspace: boolean,
): string {
  const lines = [
    `Skill "${skill.name}" (${sourceLabel(skill.source.kind)}): ${skill.description}`,
    "",
    `<skill-instructions name="${skill.name}">`,
    skill.body,
    "</skill-instructions>",
  ];
  if (files.length > 0) {
    const shown = inWorkspace
      ? files.map((file) => `- ${path.relative(workspaceRoot, path.join(skill.dir, file))}`)
      : files.map((file) => `- ${file}`);
    lines.push(
      "",
      inWorkspace
        ? "Files beside it (read them with read_file at these workspace paths):"
        : `Files beside it (outside the workspace: read one with load_skill {"name": "${skill.name}", "file": "<file>"}):`,
      ...shown,
    );
  }
  return lines.join("\n");
}
