/**
 * Running a skill directly: a person types `skill <name> [text]` in a thread (or sends
 * `/skill …`, `/coworker skill …`), and the turn starts with that skill loaded and the text as
 * the request. The stored user message keeps what the person typed in `meta.display` and marks
 * the skill in `meta.skill` (so a later disable brings the countermand); its content — what the
 * model reads — frames the skill's instructions and the request. A name that is not an enabled
 * skill leaves the message an ordinary one.
 */
import type { ConversationExecutionRequest } from "../core/request.js";
import type { FramedPrompt } from "../engine/turn-engine.js";
import { SKILL_RUN_META } from "./skill-context.js";
import type { SkillLibrary } from "./skill-library.js";
import { loadedSkillText } from "./skill-text.js";

/** A recognised `skill <name> [text]` message. */
export interface SkillRunRequest {
  readonly name: string;
  readonly text: string;
}

const SKILL_RUN = /^\/?skill(?:@\w+)?\s+([a-z0-9][a-z0-9-]{0,63})(?:\s+([\s\S]*))?$/;

/** The skill name and request text of a `skill <name> [text]` message, if it is one. */
export function parseSkillRun(prompt: string): SkillRunRequest | undefined {
  const match = SKILL_RUN.exec(prompt.trim());
  if (!match) return undefined;
  return { name: match[1]!, text: (match[2] ?? "").trim() };
}

/** The text a skill-run command queues as the person's message. */
export function skillRunText(name: string, text: string): string {
  return text === "" ? `skill ${name}` : `skill ${name} ${text}`;
}

/**
 * The framed user message for a turn whose prompt runs an enabled skill; undefined for any other
 * prompt (it is then stored and sent as typed).
 */
export async function frameSkillRun(
  library: SkillLibrary,
  request: ConversationExecutionRequest,
): Promise<FramedPrompt | undefined> {
  const run = parseSkillRun(request.prompt);
  if (!run) return undefined;
  const entry = library.find(run.name, await library.scan());
  if (!entry?.enabled) return undefined;
  const files = await library.filesBeside(entry.skill);
  const loaded = loadedSkillText(entry.skill, files, library.workspaceRoot, library.inWorkspace(entry.skill));
  const ask = run.text === "" ? "(no further text: do what the skill describes)" : run.text;
  return {
    content: `The person ran the skill "${run.name}" directly, so it is already loaded: follow its instructions for this request.\n\n${loaded}\n\nRequest: ${ask}`,
    meta: { display: request.prompt, [SKILL_RUN_META]: run.name },
  };
}
