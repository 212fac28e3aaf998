/**
 * The tool-result wordings the model reads when a call did not simply succeed.
 *
 * Each situation has its own wording so the model is never misled: a call the user denied, one
 * that never started because the turn was stopped, one stopped while running (it may have partly
 * run), one that failed, one blocked by policy, one past the per-step call limit, and the "not
 * available here" answers for interactions no one can answer on this surface.
 */
import { clip, clipWithMarker } from "../core/surrogate-pairs.js";

export const TOOL_RESULT = Object.freeze({
  deniedByUser: "Not run: the user denied this call. Do not retry it unless they ask you to.",
  notStarted: "Not run: the user stopped the turn before this call started. Nothing was executed.",
  changedSinceApproval:
    "Not run: what this call would do changed after the user approved it (what its card showed — a file, a subscription — is no longer the same). Nothing was executed. Propose it again if it is still wanted, so they see the current version.",
  notStartedWhileWaiting:
    "Not run: the user stopped the turn while this call was waiting for their decision. Nothing was executed.",
  interruptedWhileRunning:
    "Interrupted while running — the turn was stopped during this call, so it may have partly run. Check its effects before repeating it.",
  approvalUnavailable:
    "Not run: this call needs a person's approval, and approval isn't available here. Continue without it or explain what you would have done.",
  askUnavailable:
    "Asking the user isn't available here. Continue with your best judgement and state the assumption you made.",
  planUnavailable:
    "Plan approval isn't available here. Describe your plan in your reply instead of proposing it with a tool.",
  planUpdated: "Plan updated.",
});

/** The `tool-call-finished` reason of a call naming a tool the registry does not have. */
export const UNKNOWN_TOOL_REASON = "not found";

/** A call the policy refused (hard deny, mode, …), with the policy's reason. */
export function deniedByPolicy(reason: string): string {
  return `Not run: denied by policy — ${reason}`;
}

/** A call to a tool this conversation does not allow. */
export function notEnabled(tool: string): string {
  return `Not run: the tool "${tool}" is not enabled in this conversation.`;
}

/** A call past the per-step limit on tool calls, in a history stored before they were dropped: never authorised or run. */
export function tooManyCalls(limit: number): string {
  return `Not run: a step may make at most ${limit} tool calls, and this call came after them. Nothing was executed. Make fewer calls per step; repeat this one in a later step if it is still needed.`;
}

/**
 * What the model is told, once, on the result of the first call it kept, when its step asked for
 * more calls than the limit: the calls past it were dropped from the step and never run.
 */
export function droppedCallsNote(limit: number, dropped: number): string {
  return `[Note: your last step asked for ${limit + dropped} tool calls; a step may make at most ${limit}. Only the first ${limit} were kept; the other ${dropped} were dropped and nothing was executed for them. Make fewer calls per step; repeat a dropped call in a later step if it is still needed.]`;
}

/** A call that ran and failed (thrown error or a tool's own failure output). */
export function failed(message: string): string {
  return `Failed: ${message}`;
}

/** The plan was approved and the session switched mode. */
export function planApproved(mode: string): string {
  return `Plan approved. The session is now in ${mode} mode — implement the plan now.`;
}

/** The plan was rejected, with the person's feedback when they gave any. */
export function planRejected(feedback: string | undefined): string {
  const said = feedback?.trim() ? ` Their feedback: ${feedback.trim()}` : "";
  return `Plan not approved.${said} Revise the plan and propose it again.`;
}

/** A one-line, bounded preview of a text (newlines shown as ⏎). */
export function preview(text: string, maxChars = 300): string {
  return clip(text.replace(/\r?\n/g, "⏎ "), maxChars);
}

/** Characters a status-line reason keeps. */
export const REASON_MAX_CHARS = 60;

/**
 * A call's status-line reason: the first non-empty line of `text`, bounded to
 * `REASON_MAX_CHARS`; undefined when there is nothing to say.
 */
export function statusReason(text: string | undefined): string | undefined {
  const line = text
    ?.split(/\r?\n/)
    .map((part) => part.replace(/\s+/g, " ").trim())
    .find((part) => part !== "");
  if (line === undefined) return undefined;
  return clip(line, REASON_MAX_CHARS);
}

/** Characters of a mangled argument text kept in history. */
export const MANGLED_PREVIEW_CHARS = 200;

/**
 * What history keeps of arguments that never parsed as a JSON object: a short preview wrapped in
 * a valid JSON object (some chat templates parse stored arguments), never the full junk text.
 */
export function mangledArgumentsRecord(raw: string): string {
  const shown = clipWithMarker(raw, MANGLED_PREVIEW_CHARS, () => `… [${raw.length} chars, truncated]`);
  return JSON.stringify({ unparsed_arguments_preview: shown });
}
