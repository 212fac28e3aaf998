/**
 * The conversation place a tool call comes from. The session layer puts the session's
 * ThreadTarget into `request.metadata.target`; tools read it here, validated, never trusted raw.
 */
import { z } from "zod";
import { targetExtraSchema } from "../core/thread-target.js";
import type { ConversationExecutionRequest } from "../core/request.js";
import type { ThreadTarget } from "../core/thread-target.js";

const threadTargetSchema = z.object({
  platform: z.string().min(1),
  workspace: z.string().min(1),
  channel: z.string().min(1),
  thread: z.string().min(1).optional(),
  extra: targetExtraSchema.optional(),
});

/** The ThreadTarget of the session that made this request, or undefined when none was recorded. */
export function threadTargetOf(request: ConversationExecutionRequest): ThreadTarget | undefined {
  const parsed = threadTargetSchema.safeParse(request.metadata.target);
  return parsed.success ? parsed.data : undefined;
}
