/**
 * The conversation place a tool call comes from, and the person it acts for. The session layer
 * puts the session's ThreadTarget into `request.metadata.target`; tools read it here, validated,
 * never trusted raw.
 */
import type { ConversationExecutionRequest } from "../core/request.js";
import { type Caller, isSharedThread, type ThreadTarget, threadTargetSchema } from "../core/thread-target.js";

/** The ThreadTarget of the session that made this request, or undefined when none was recorded. */
export function threadTargetOf(request: ConversationExecutionRequest): ThreadTarget | undefined {
  const parsed = threadTargetSchema.safeParse(request.metadata.target);
  return parsed.success ? parsed.data : undefined;
}

/**
 * The conversation this request comes from and the person it acts for (what the messaging,
 * subscription and schedule tools act as), or undefined when no thread was recorded.
 */
export function requestCaller(request: ConversationExecutionRequest): Caller | undefined {
  const target = threadTargetOf(request);
  if (!target) return undefined;
  return {
    sessionId: request.sessionId,
    target,
    requester: { id: request.requester.userId, name: request.requester.displayName },
  };
}

/**
 * Why a tool listing `what` (the requester's standing items in every conversation) would show
 * this conversation's audience what not all of them may see: the conversation is shared by several
 * people (ToolDefinition.widensAudience). Undefined in a DM or a conversation without a thread.
 */
export function listingWidensAudience(
  request: ConversationExecutionRequest,
  what: string,
): string | undefined {
  const target = threadTargetOf(request);
  if (!target || !isSharedThread(target)) return undefined;
  return `it shows ${what} from every conversation, DMs included, in this one, where several people read along`;
}
