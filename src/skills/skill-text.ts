/**
 * How a loaded skill reads to the model, shared by `load_skill` and a skill run directly: its
 * name, source and description, the instructions, and the files beside it — as workspace paths
 * for `read_file` when the skill lives in the workspace, else as names to pass to `load_skill`.
 * The instructions are framed by `<skill-instructions>` tags; a tag of that name inside them is
 * neutralised (its `<` written `&lt;`), so a body cannot close the frame and speak outside it.
 */
import path from "node:path";
import type { Skill } from "./skill.js";
import { sourceLabel } from "./skill.js";

/** `text` with every `<skill-instructions` or `</skill-instructions` tag made inert. */
function neutralisedFrameTags(text: string): string {
  return text.replace(/<(\s*\/?\s*skill-instructions)/gi, "&lt;$1");
}

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
    neutralisedFrameTags(skill.body),
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
