/**
 * The skills' part of the per-turn context: the catalog of enabled skills, and a countermand line
 * for each skill whose instructions entered this conversation earlier (a successful `load_skill`,
 * or a person running it directly) but that has since been disabled or removed. History cannot
 * be un-read, so a quietly shrinking catalog is not enough: the model is told to stop following
 * it. Both are recomputed every turn and never persisted — re-enabling a skill drops the line.
 */
import type { ConversationMessage } from "../core/messages.js";
import type { ConversationExecutionRequest } from "../core/request.js";
import type { SkillLibrary } from "./skill-library.js";

/** The tool whose successful calls count as loading a skill. */
export const LOAD_SKILL = "load_skill";
/** The `meta` key marking a user message that ran a skill directly. */
export const SKILL_RUN_META = "skill";

function nameArgument(argumentsText: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(argumentsText);
    if (typeof parsed !== "object" || parsed === null) return undefined;
    const { name, file } = parsed as { name?: unknown; file?: unknown };
    return typeof name === "string" && file === undefined ? name : undefined;
  } catch {
    return undefined;
  }
}

/** The skills whose instructions entered this history, in order of first appearance. */
export function loadedSkillNames(history: readonly ConversationMessage[]): string[] {
  const okResults = new Set<string>();
  for (const message of history)
    if (message.role === "tool" && message.meta?.status === "ok") okResults.add(message.tool_call_id);
  const loaded = new Set<string>();
  for (const message of history) {
    if (message.role === "user" && typeof message.meta?.[SKILL_RUN_META] === "string")
      loaded.add(message.meta[SKILL_RUN_META] as string);
    if (message.role !== "assistant" || !message.tool_calls) continue;
    for (const call of message.tool_calls) {
      if (call.function.name !== LOAD_SKILL || !okResults.has(call.id)) continue;
      const name = nameArgument(call.function.arguments);
      if (name !== undefined) loaded.add(name);
    }
  }
  return [...loaded];
}

/** The countermand for one skill that is no longer available. */
export function countermandLine(name: string, removed: boolean): string {
  return `The skill "${name}" has been ${removed ? "removed" : "disabled"} — stop following its instructions from here on.`;
}

/** The skills' context block for a turn: catalog and countermands; undefined when empty. */
export async function skillsContext(
  library: SkillLibrary,
  request: ConversationExecutionRequest,
): Promise<string | undefined> {
  const scan = await library.scan();
  const parts: string[] = [];
  const catalog = library.catalog(scan);
  if (catalog) parts.push(catalog);
  for (const name of loadedSkillNames(request.messages))
    if (!library.find(name, scan)?.enabled) parts.push(countermandLine(name, !scan.skills.has(name)));
  return parts.length > 0 ? parts.join("\n") : undefined;
}
