/**
 * Running a skill directly: a person types `skill <name> [text]` in a thread (or sends
 * `/skill …`, `/coworker skill …`), and the turn starts with that skill loaded and the text as
 * the request. The stored user message keeps what the person typed in `meta.display` and marks
 * the skill in `meta.skill` (so a later disable brings the countermand); its content — what the
 * model reads — frames the skill's instructions and the request. A name that is not an enabled
 * skill (switched off, misspelt, or an ordinary message that starts with "skill") is answered as
 * typed, but the model is told first that no enabled skill has that name — and which ones do — so
 * that a person who meant to run one hears why it did not run instead of a silent ordinary reply.
 */
import type { ConversationExecutionRequest } from "../core/request.js";
import type { FramedPrompt } from "../engine/turn-engine.js";
import { SKILL_RUN_META } from "./skill-context.js";
import type { SkillLibrary } from "./skill-library.js";
import type { SkillScan } from "./skill-loader.js";
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

/** Most enabled skill names a prompt naming no enabled skill lists. */
const NAMES_LISTED = 20;

/**
 * The message as typed, after a note that `name` is no enabled skill (`off`: one exists, switched
 * off) and which are; what the person typed stays what they see.
 */
function notRunnable(
  library: SkillLibrary,
  typed: string,
  name: string,
  off: boolean,
  scan: SkillScan,
): FramedPrompt {
  const names = library.enabled(scan).map((skill) => skill.name);
  const listed =
    names.length === 0
      ? "No skill is enabled here."
      : `The enabled skills: ${names.slice(0, NAMES_LISTED).join(", ")}${names.length > NAMES_LISTED ? ", …" : ""}.`;
  const why = off
    ? `the skill "${name}" is switched off for this workspace`
    : `there is no skill named "${name}"`;
  return {
    content: `(Note for you, not from the person: this message starts like a direct skill run, \`skill <name>\`, but ${why}, so no skill was loaded. ${listed} If they meant to run a skill, tell them briefly first; otherwise just answer.)\n\n${typed}`,
    meta: { display: typed },
  };
}

/**
 * The framed user message for a turn whose prompt starts `skill <name>`: with the skill loaded
 * when it is enabled, else as typed after a note that it is not (notRunnable); undefined for any
 * other prompt (it is then stored and sent as typed).
 */
export async function frameSkillRun(
  library: SkillLibrary,
  request: ConversationExecutionRequest,
): Promise<FramedPrompt | undefined> {
  const run = parseSkillRun(request.prompt);
  if (!run) return undefined;
  const scan = await library.scan();
  const entry = library.find(run.name, scan);
  if (!entry?.enabled) return notRunnable(library, request.prompt, run.name, entry !== undefined, scan);
  const files = await library.filesBeside(entry.skill);
  const loaded = loadedSkillText(entry.skill, files, library.workspaceRoot, library.inWorkspace(entry.skill));
  const ask = run.text === "" ? "(no further text: do what the skill describes)" : run.text;
  return {
    content: `The person ran the skill "${run.name}" directly, so it is already loaded: follow its instructions for this request.\n\n${loaded}\n\nRequest: ${ask}`,
    meta: { display: request.prompt, [SKILL_RUN_META]: run.name },
  };
}
