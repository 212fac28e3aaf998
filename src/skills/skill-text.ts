/**
 * How a loaded skill reads to the model, shared by `load_skill` and a skill run directly: its
 * name, source and description, the instructions, and the files beside it — as workspace paths
 * for `read_file` when the skill lives in the workspace, else as names to pass to `load_skill`.
 * The instructions are framed by `<skill-instructions>` tags; a tag of that name inside them or in
 * the description just above is neutralised (its `<` written `&lt;`), in any form a reader might
 * take for one (core/frame-marks.ts: fullwidth `＜`, invisible characters inside, any case), so
 * neither can close or open a frame and speak outside it. The description is one line
 * (core/one-line.ts foldedLine), and a file whose name holds a line break or another control
 * character (core/one-line.ts) is left out of the list, so neither can add lines of their own
 * outside the frame.
 */
import path from "node:path";
import { markLike, neutraliseMarks } from "../core/frame-marks.js";
import { foldedLine, oneLine } from "../core/one-line.js";
import { type Skill, sourceLabel } from "./skill.js";

/** A `<skill-instructions` or `</skill-instructions` tag as text might write it (core/frame-marks.ts). */
const FRAME_TAG = markLike("skill-instructions");

/** `text` with every frame tag made inert. */
function neutralisedFrameTags(text: string): string {
  return neutraliseMarks(text, FRAME_TAG);
}

/** A skill's description on one line, its frame tags made inert. */
function shownDescription(description: string): string {
  return neutralisedFrameTags(foldedLine(description));
}

/** The full text of a loaded skill. */
export function loadedSkillText(
  skill: Skill,
  files: readonly string[],
  workspaceRoot: string,
  inWorkspace: boolean,
): string {
  const lines = [
    `Skill "${skill.name}" (${sourceLabel(skill.source.kind)}): ${shownDescription(skill.description)}`,
    "",
    `<skill-instructions name="${skill.name}">`,
    neutralisedFrameTags(skill.body),
    "</skill-instructions>",
  ];
  // A name oneLine would change holds a control character (a line break, a tab, an escape).
  const listed = files.filter((file) => oneLine(file) === file);
  if (listed.length > 0) {
    const shown = inWorkspace
      ? listed.map((file) => `- ${path.relative(workspaceRoot, path.join(skill.dir, file))}`)
      : listed.map((file) => `- ${file}`);
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
