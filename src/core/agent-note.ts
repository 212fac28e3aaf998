/**
 * Agent notes: text the agent wrote itself that starts a turn later instead of a person's message
 * — the note of a wake-up it set (wake_me_later), or the text of a scheduled task no person
 * approved. Such a turn carries `metadata.agentNote` in its request (put there by the session layer
 * from the wake turn, kept in the queue and in the stored request, so a restart keeps it), and the
 * engine marks the turn's user message `meta.agentNote`: the model is told the words are its own,
 * and the safety reviewer never reads them as the user's request.
 */
import type { ConversationMessage } from "./messages.js";
import type { ConversationExecutionRequest } from "./request.js";

/**
 * Whether the turn's input is the agent's own note. Anything stored under the key counts: a value
 * that is not the expected `true` must not turn the agent's text into a person's request.
 */
export function startedByAgentNote(request: ConversationExecutionRequest): boolean {
  const note = request.metadata.agentNote;
  return note !== undefined && note !== false;
}

/** Whether a stored message is the user message of a turn the agent's own note started. */
export function isAgentNote(message: ConversationMessage): boolean {
  return message.role === "user" && message.meta?.agentNote === true;
}
