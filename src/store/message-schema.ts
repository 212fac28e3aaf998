/**
 * Zod schema for ConversationMessage (src/engine/messages.ts), used to validate history read back
 * from the store. Unknown fields are kept, so a field added to the contract later is not lost.
 * `attachments` (user and tool messages) is optional, so records written before it parse as before.
 */
import { z } from "zod";
import type { ConversationMessage } from "../core/messages.js";
import { attachmentSchema } from "../core/attachment.js";
import { permissionModeSchema } from "../core/modes.js";

const usageSchema = z.object({
  inputTokens: z.number(),
  outputTokens: z.number(),
  totalTokens: z.number(),
});

const metaSchema = z.looseObject({
  at: z.string().optional(),
  source: z.string().optional(),
  usage: usageSchema.optional(),
  notice: z.string().optional(),
  error: z.string().optional(),
  untrusted: z.boolean().optional(),
  agentNote: z.boolean().optional(),
  by: z.string().optional(),
  stepMode: permissionModeSchema.optional(),
});

const toolCallSchema = z.object({
  id: z.string(),
  type: z.literal("function"),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

/** One stored conversation message; the output type is checked against ConversationMessage. */
export const conversationMessageSchema: z.ZodType<ConversationMessage> = z.discriminatedUnion("role", [
  z.looseObject({ role: z.literal("system"), content: z.string(), meta: metaSchema.optional() }),
  z.looseObject({
    role: z.literal("user"),
    content: z.string(),
    attachments: z.array(attachmentSchema).optional(),
    meta: metaSchema.optional(),
  }),
  z.looseObject({
    role: z.literal("assistant"),
    content: z.string().nullable(),
    tool_calls: z.array(toolCallSchema).optional(),
    meta: metaSchema.optional(),
  }),
  z.looseObject({
    role: z.literal("tool"),
    tool_call_id: z.string(),
    content: z.string(),
    attachments: z.array(attachmentSchema).optional(),
    meta: metaSchema.optional(),
  }),
]);
