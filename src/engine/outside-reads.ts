/**
 * Outside reads: which tools reading text from outside the conversation (`readsOutside`: a web
 * page, another channel, an MCP server's data) the agent has called since the requester last
 * wrote. Worked out once per call by the turn (TurnContext.outsideReads) for both who are told of
 * it: the safety reviewer (reviewer/review-input.ts, outsideReadsFact) and the person on the
 * approval card (asking/approval-request.ts).
 */
import { isAgentNote } from "../core/agent-note.js";
import { type ConversationMessage, writtenByOther } from "../core/messages.js";

/** Whether a user message is a person's own words: not channel content, not the agent's note, not empty. */
export function isPersonMessage(message: Extract<ConversationMessage, { role: "user" }>): boolean {
  return message.meta?.untrusted !== true && !isAgentNote(message) && message.content.trim() !== "";
}

/**
 * The tools whose results carry text from outside this conversation that the agent has called
 * since `requester` last wrote, as "web_fetch ×2, catch_up"; undefined when it has called none.
 * Tool names only, never what they read: text read there may have steered a later call.
 */
export function outsideReadsOf(
  history: readonly ConversationMessage[],
  requester: string,
  readsOutside: (tool: string) => boolean,
): string | undefined {
  const since = history.findLastIndex(
    (m) => m.role === "user" && isPersonMessage(m) && !writtenByOther(m, requester),
  );
  const counts = new Map<string, number>();
  for (const message of history.slice(since + 1))
    if (message.role === "assistant")
      for (const call of message.tool_calls ?? [])
        if (readsOutside(call.function.name))
          counts.set(call.function.name, (counts.get(call.function.name) ?? 0) + 1);
  if (counts.size === 0) return undefined;
  return [...counts].map(([tool, n]) => (n === 1 ? tool : `${tool} ×${n}`)).join(", ");
}
