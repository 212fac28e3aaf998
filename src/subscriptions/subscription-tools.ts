/**
 * The agent's subscription tools — subscribe_channel, unsubscribe_channel, list_subscriptions and
 * catch_up — scoped to the calling session: the session id and thread come from the request
 * (`request.sessionId`, `request.metadata.target`), the person from `request.requester`. They are
 * reads (no approval), guarded instead by the platform membership check. A turn woken by channel
 * content may read, but may not change what the session watches.
 */
import { z } from "zod";
import { provenanceOf } from "../engine/permissions/permission-engine.js";
import type { ConversationExecutionRequest } from "../core/request.js";
import { type AnyTool, defineTool, fail, ok, type ToolResult } from "../core/tool.js";
import type { Caller, Outcome } from "./channel-access.js";
import {
  MAX_INSTRUCTIONS_CHARS,
  MAX_KEYWORD_CHARS,
  MAX_KEYWORDS,
  threadTargetSchema,
} from "./subscription.js";
import type { SubscriptionService } from "./subscription-service.js";
import type { SubscriptionOwner } from "./subscription-service-options.js";
import { personLines } from "./subscription-text.js";

/** What the tools need from the service. */
export type SubscriptionToolsService = Pick<
  SubscriptionService,
  "subscribe" | "remove" | "listForPerson" | "catchUp"
>;

const channelArg = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .describe(
    "Slack: channel id or #name. Telegram: chat id or @username; a forum topic as chat:topic (e.g. -1001234:5)",
  );

const subscribeSchema = z.object({
  channel: channelArg,
  trigger: z
    .object({
      type: z.enum(["all", "mention", "keywords"]).describe("all (default), mention (of me), or keywords"),
      keywords: z
        .array(z.string().max(MAX_KEYWORD_CHARS))
        .max(MAX_KEYWORDS)
        .optional()
        .describe("Words or phrases, matched case-insensitively as whole words (keywords trigger only)"),
    })
    .optional()
    .describe("Which messages wake this conversation (default: every message)"),
  instructions: z
    .string()
    .max(MAX_INSTRUCTIONS_CHARS)
    .optional()
    .describe("What to do when woken, in the person's words (e.g. 'tell me here when a deploy fails')"),
});

const unsubscribeSchema = z.object({
  channel: channelArg.describe("The channel (or subscription id) to stop watching"),
});

const listSchema = z.object({});

const catchUpSchema = z.object({
  channel: channelArg,
  limit: z.number().int().min(1).max(200).optional().describe("Most messages to return (default 50)"),
  since: z
    .string()
    .max(40)
    .optional()
    .describe("ISO date or date-time: messages since then, read or not (default: only unread ones)"),
});

/** The calling session and person, or why the tool (of `feature`) cannot run here. */
export function callerOf(
  request: ConversationExecutionRequest,
  feature = "channel subscriptions are",
): Caller | string {
  const target = threadTargetSchema.safeParse(request.metadata.target);
  if (!target.success) return `This conversation has no thread to report to, so ${feature} unavailable here.`;
  return {
    sessionId: request.sessionId,
    target: target.data,
    requester: { id: request.requester.userId, name: request.requester.displayName },
  };
}

/** Why a turn started by channel content may not do `what` (undefined: a person's turn, it may). */
export function untrustedTurn(
  request: ConversationExecutionRequest,
  what = "change what this conversation watches",
): string | undefined {
  const provenance = provenanceOf(request);
  if (provenance.kind !== "channel_content") return undefined;
  return `This turn was started by messages from ${provenance.channel ?? "a watched channel"}, so it cannot ${what}. Ask the person here to request it.`;
}

/** The caller of a tool that changes what the session watches, or why it cannot run here. */
function changingCaller(request: ConversationExecutionRequest): Caller | string {
  const caller = callerOf(request);
  if (typeof caller === "string") return caller;
  return untrustedTurn(request) ?? caller;
}

/** The person behind a caller, asking from the caller's conversation. */
export function ownerOf(caller: Caller): SubscriptionOwner {
  return { sessionId: caller.sessionId, platform: caller.target.platform, userId: caller.requester.id };
}

function result(outcome: Outcome): ToolResult {
  return outcome.ok ? ok(outcome.message) : fail(outcome.message);
}

/** What differs between the tools that act on one channel for the calling session. */
interface ChannelToolSpec<Schema extends z.ZodType<{ readonly channel: string }>> {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Schema;
  readonly concurrent: boolean;
  /** Changes what the session watches: refused in a turn woken by channel content. */
  readonly changesWatch: boolean;
  /** The service's answer for the caller. */
  readonly run: (caller: Caller, args: z.infer<Schema>) => Promise<Outcome>;
}

/** A read-category tool on one channel, run for the calling session, answering with the outcome. */
function channelTool<Schema extends z.ZodType<{ readonly channel: string }>>(
  spec: ChannelToolSpec<Schema>,
): AnyTool {
  return defineTool({
    name: spec.name,
    description: spec.description,
    inputSchema: spec.inputSchema,
    category: "read",
    risk: "low",
    concurrent: spec.concurrent,
    label: (args) => args.channel,
    async execute(args, context) {
      const caller = spec.changesWatch ? changingCaller(context.request) : callerOf(context.request);
      if (typeof caller === "string") return fail(caller);
      return result(await spec.run(caller, args));
    },
  });
}

/** Build the four subscription tools over a service. */
export function createSubscriptionTools(service: SubscriptionToolsService): readonly AnyTool[] {
  const subscribe = channelTool({
    name: "subscribe_channel",
    description:
      "Watch a Slack channel or Telegram group/topic for this conversation: matching new messages wake you here " +
      "(batched) as channel content, with the instructions given. Only for channels the person asking is a member of.",
    inputSchema: subscribeSchema,
    concurrent: false,
    changesWatch: true,
    run: (caller, args) => service.subscribe(caller, args),
  });
  const unsubscribe = channelTool({
    name: "unsubscribe_channel",
    description:
      "Stop watching a channel: this conversation's subscription to it, else one of the person's own " +
      "subscriptions in any of their conversations.",
    inputSchema: unsubscribeSchema,
    concurrent: false,
    changesWatch: true,
    run: (caller, args) => service.remove(ownerOf(caller), args.channel),
  });
  const list = defineTool({
    name: "list_subscriptions",
    description:
      "List the person's channel subscriptions across all their conversations with me: channel, trigger, " +
      "instructions, and which conversation each one wakes.",
    inputSchema: listSchema,
    category: "read",
    risk: "low",
    concurrent: true,
    label: () => "the person's subscriptions",
    async execute(_args, context) {
      const caller = callerOf(context.request);
      if (typeof caller === "string") return fail(caller);
      return ok(personLines(await service.listForPerson(ownerOf(caller)), caller.sessionId).join("\n"));
    },
  });
  const catchUp = channelTool({
    name: "catch_up",
    description:
      "Read the messages of a channel this conversation has not read yet (or those since a date), oldest first, " +
      "with author and time. Calling it again continues where it stopped. Only for channels the person asking is in.",
    inputSchema: catchUpSchema,
    concurrent: true,
    changesWatch: false,
    run: (caller, args) => service.catchUp(caller, args),
  });
  return Object.freeze([subscribe, unsubscribe, list, catchUp]);
}
