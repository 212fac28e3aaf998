/**
 * The shape shared by the subscription tools that act on one named channel for the calling session
 * (subscribe_channel, unsubscribe_channel, catch_up): each gives its schema, category and how it
 * runs, and gets a tool labelled by the channel whose result is the service's outcome. Kept apart
 * from subscription-tools.ts, which defines the tools themselves, as the one generic builder there.
 */
import type { z } from "zod";
import type { ConversationExecutionRequest } from "../core/request.js";
import {
  type AnyTool,
  defineTool,
  fail,
  ok,
  type ToolContext,
  type ToolPreview,
  type ToolResult,
} from "../core/tool.js";
import type { Outcome } from "./channel-access.js";

function result(outcome: Outcome): ToolResult {
  return outcome.ok ? ok(outcome.message) : fail(outcome.message);
}

/** What differs between the tools that act on one channel for the calling session. */
interface ChannelToolSpec<Schema extends z.ZodType<{ readonly channel: string }>> {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Schema;
  /** write: creates or ends a standing item (interactive mode asks); read: runs unasked. */
  readonly category: "read" | "write";
  readonly concurrent: boolean;
  /** Its answer carries other people's messages from the channel (ToolDefinition's readsOutside). */
  readonly readsOutside?: boolean;
  /** Why a call may show this conversation what not all of it may see (ToolDefinition's widensAudience). */
  readonly widensAudience?: (
    args: z.infer<Schema>,
    request: ConversationExecutionRequest,
  ) => string | undefined;
  /** The service's answer for this call, or why it cannot run here. */
  readonly run: (args: z.infer<Schema>, context: ToolContext) => Promise<Outcome>;
  readonly preview?: (
    args: z.infer<Schema>,
    request: ConversationExecutionRequest,
  ) => ToolPreview | Promise<ToolPreview>;
  /** An approved call runs only while its preview, made again, has its card's fingerprint (ToolDefinition's bindsPreview). */
  readonly bindsPreview?: boolean;
}

/** A tool on one channel, run for the calling session, answering with the outcome. */
export function channelTool<Schema extends z.ZodType<{ readonly channel: string }>>(
  spec: ChannelToolSpec<Schema>,
): AnyTool {
  const { preview } = spec;
  return defineTool({
    name: spec.name,
    description: spec.description,
    inputSchema: spec.inputSchema,
    category: spec.category,
    risk: spec.category === "write" ? "medium" : "low",
    concurrent: spec.concurrent,
    ...(spec.readsOutside ? { readsOutside: true } : {}),
    ...(spec.widensAudience ? { widensAudience: spec.widensAudience } : {}),
    ...(spec.bindsPreview ? { bindsPreview: true } : {}),
    label: (args) => args.channel,
    ...(preview ? { preview: async (args, { request }) => preview(args, request) } : {}),
    async execute(args, context) {
      return result(await spec.run(args, context));
    },
  });
}
