/**
 * The outbound view: what one model call actually receives.
 *
 * Built fresh for every call from the stored history, and never written back: the system prompt
 * (with the compaction summary, when older turns are compacted), the history with display-only
 * fields stripped and failed-attempt markers dropped, and the ephemeral context block appended to
 * the last user message.
 */
import { type ConversationMessage, type ModelMessage, toModelMessage } from "./messages.js";

export interface OutboundInput {
  readonly instructions: string;
  /** Summary of the compacted older turns, when compaction is in force. */
  readonly summary?: string | undefined;
  /** The history to send (already without the compacted prefix). */
  readonly messages: readonly ConversationMessage[];
  /** Ephemeral per-call context (mode reminders, channel info); never persisted. */
  readonly context?: string | undefined;
}

/** Whether a stored message is a failed model attempt (kept for display and `retry`, never sent). */
export function isErrorMarker(message: ConversationMessage): boolean {
  return message.role === "assistant" && typeof message.meta?.error === "string";
}

/** Build the model-facing message list (see the module header). */
export function buildOutbound(input: OutboundInput): ModelMessage[] {
  const out: ModelMessage[] = [];
  const system = input.summary
    ? `${input.instructions}\n\n<conversation-summary>\nEarlier turns of this conversation were compacted. Summary:\n${input.summary}\n</conversation-summary>`
    : input.instructions;
  if (system) out.push({ role: "system", content: system });
  for (const message of input.messages) if (!isErrorMarker(message)) out.push(toModelMessage(message));
  if (input.context) {
    for (let i = out.length - 1; i >= 0; i--) {
      const message = out[i]!;
      if (message.role === "user") {
        out[i] = { role: "user", content: `${message.content}\n\n<context>\n${input.context}\n</context>` };
        break;
      }
    }
  }
  return out;
}
