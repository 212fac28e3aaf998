/**
 * The conversation place a tool call comes from. The session layer puts the session's
 * ThreadTarget into `request.metadata.target`; tools read it here, validated, never trusted raw.
 */
import type { ConversationExecutionRequest } from "../core/request.js";
import { type ThreadTarget, threadTargetSchema } from "../core/thread-target.js";

/** The ThreadTarget of the session that made this request, or undefined when none was recorded. */
export function threadTargetOf(request: ConversationExecutionRequest): ThreadTarget | undefined {
  const parsed = threadTargetSchema.safeParse(request.metadata.target);
  return parsed.success ? parsed.data : undefined;
}
