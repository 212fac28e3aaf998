/**
 * The agent's subscription tools — subscribe_channel, unsubscribe_channel, list_subscriptions and
 * catch_up — scoped to the calling session: the session id and thread come from the request
 * (`request.sessionId`, `request.metadata.target`), the person from `request.requester`, and each
 * channel is checked with the platform for that person's membership. subscribe_channel creates a
 * standing item and unsubscribe_channel ends one, so they are writes (interactive mode asks, with
 * a card showing the new item's instructions whole, as schedule_task's does, or the item that
 * ends); the others are reads. A subscription's instructions are stored as the person's only when
 * a person approved that very call on its card (ToolContext.approvedByPerson), else as the agent's
 * own (auto mode, a grant, the reviewer), and its wake-ups credit them so. In a thread several
 * people share, catch_up of another channel and subscribe_channel to one (whose messages wake the
 * thread and are read into it from then on) ask a person every time (widensAudience): no standing
 * grant nor reviewer model decides who reads that channel here.
 *
 * A turn woken by channel content has no person asking: its requester is the subscriber, whose
 * standing is lent to it only to read what woke it. There catch_up reads only the channel of the
 * subscription whose content woke the turn, and the tools that act for the person (`callerOf`:
 * these and the scheduled-task tools) refuse — its reply goes to this conversation, where the
 * content's authors may read what it found.
 */
import { z } from "zod";
import { clipLine, literalLine } from "../core/one-line.js";
import { markdownLiteral, personInMarkdown } from "../core/person-text.js";
import { provenanceOf } from "../engine/permissions/permission-engine.js";
import type { ConversationExecutionRequest } from "../core/request.js";
import { type AnyTool, defineTool, fail, ok, type ToolPreview } from "../core/tool.js";
import { type Caller, isSharedThread } from "../core/thread-target.js";
import { listingWidensAudience, requestCaller, threadTargetOf } from "../tools/session-target.js";
import type { Outcome } from "./channel-access.js";
import { channelTool } from "./channel-tool.js";
import {
  channelArgOf,
  isCreatedBy,
  isNamedBy,
  MAX_INSTRUCTIONS_CHARS,
  MAX_KEYWORD_CHARS,
  MAX_KEYWORDS,
} from "./subscription.js";
import type { SubscriptionService } from "./subscription-service.js";
import type { SubscribeArgs, SubscriptionOwner } from "./subscription-service-options.js";
import {
  asWritten,
  channelShown,
  creatorShown,
  describeSubscription,
  personLines,
  wakesWhere,
} from "./subscription-text.js";
import { describeTrigger, parseTrigger } from "./triggers.js";
import { shownTo } from "./subscription-removal.js";

/** What the tools need from the service. */
export type SubscriptionToolsService = Pick<
  SubscriptionService,
  "subscribe" | "remove" | "toRemove" | "listForPerson" | "listFor" | "catchUp"
>;

const FEATURE = "channel subscriptions are";

/** Longest channel argument, which a card shows whole. */
const CHANNEL_ARG_CHARS = 200;

const channelArg = z
  .string()
  .trim()
  .min(1)
  .max(CHANNEL_ARG_CHARS)
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

/** The conversation's thread and the turn's requester, or why the tool cannot run here. */
function threadCaller(request: ConversationExecutionRequest, feature: string): Caller | string {
  return (
    requestCaller(request) ?? `This conversation has no thread to report to, so ${feature} unavailable here.`
  );
}

/**
 * The widensAudience of a tool that reads the channel it names into this conversation — `reads`
 * says how (catch_up now, subscribe_channel with every message that wakes it from now on): why a
 * person's call may show this conversation what not all of it may see. The conversation is shared
 * by several people and the channel is another one, whose messages only its members may read (the
 * requester's membership is checked; the others' here is not). A turn woken by channel content
 * reads only the channel that woke it, which its subscription brings here anyway (and may not
 * subscribe: callerOf).
 */
function readsChannelIn(
  reads: (channel: string) => string,
): (args: { readonly channel: string }, request: ConversationExecutionRequest) => string | undefined {
  return (args, request) => {
    const target = threadTargetOf(request);
    if (!target || !isSharedThread(target) || wakingChannel(request) !== undefined) return undefined;
    const named = args.channel.trim();
    if (named === target.channel || named === `${target.channel}:${target.thread}`) return undefined;
    // The reason is shown on the card: the model's argument goes there as one line.
    return `${reads(clipLine(named, 120))}, where several people read along, members of that channel or not`;
  };
}

/** The channel whose content woke this turn; undefined in a person's turn. */
function wakingChannel(request: ConversationExecutionRequest): string | undefined {
  const provenance = provenanceOf(request);
  return provenance.kind === "channel_content" ? (provenance.channel ?? "a watched channel") : undefined;
}

/**
 * The person asking from this conversation, or why the tool (of `feature`) cannot run here: the
 * conversation has no thread, or the turn was woken by channel content — nobody asked, and acting
 * with its requester's standing would lend the subscriber's channels and standing items to the
 * content's authors.
 */
export function callerOf(request: ConversationExecutionRequest, feature = FEATURE): Caller | string {
  const caller = threadCaller(request, feature);
  if (typeof caller === "string") return caller;
  const waking = wakingChannel(request);
  if (waking === undefined) return caller;
  return `This turn was started by messages from ${waking}, so ${feature} not available in it: only a person's own request may use them. Ask the person here to request it.`;
}

/** The person behind a caller, asking from the caller's conversation. */
export function ownerOf(caller: Caller): SubscriptionOwner {
  return {
    sessionId: caller.sessionId,
    platform: caller.target.platform,
    userId: caller.requester.id,
    shared: isSharedThread(caller.target),
  };
}

/** Run `act` for the person asking from this conversation, or say why it cannot run here. */
async function asPerson(
  request: ConversationExecutionRequest,
  act: (caller: Caller) => Promise<Outcome>,
): Promise<Outcome> {
  const caller = callerOf(request);
  return typeof caller === "string" ? { ok: false, message: caller } : act(caller);
}

/**
 * Who catch_up reads for, and which channel: the person asking and the channel named; in a turn
 * woken by channel content, the subscriber and — only when `channel` names it — the channel of
 * this conversation's subscription whose content woke the turn, found by the subscription's id
 * (channel labels, Telegram group titles say, need not be unique) and read by its channel id (so a
 * name cannot resolve to another channel meanwhile). Otherwise why not.
 */
async function catchUpReader(
  service: SubscriptionToolsService,
  request: ConversationExecutionRequest,
  channel: string,
): Promise<{ readonly caller: Caller; readonly channel: string } | string> {
  const caller = threadCaller(request, FEATURE);
  if (typeof caller === "string") return caller;
  const waking = wakingChannel(request);
  if (waking === undefined) return { caller, channel };
  // A request stored before the id was kept names none, which leaves catch_up nothing to read.
  const { subscriptionId } = provenanceOf(request);
  const woke =
    subscriptionId === undefined
      ? undefined
      : (await service.listFor(caller.sessionId)).find(
          (s) => s.id === subscriptionId && isNamedBy(s, channel),
        );
  if (woke) return { caller, channel: channelArgOf(woke.channelRef) };
  return `This turn was started by messages from ${waking}, so it can read only ${waking}, not ${channel}. Ask the person here to request it.`;
}

/** What subscribe_channel's approval card shows: the channel, for whom, the trigger and the whole instructions. */
function subscribePreview(args: SubscribeArgs, request: ConversationExecutionRequest): ToolPreview {
  const caller = callerOf(request);
  // The model's words, on the card's line: one line of literal text.
  const channel = literalLine(args.channel, CHANNEL_ARG_CHARS);
  if (typeof caller === "string") return { summary: `Watch ${channel} (will be refused: ${caller})` };
  const trigger = parseTrigger(args.trigger);
  const wakes = trigger.ok ? describeTrigger(trigger.trigger) : `an invalid trigger (${trigger.error})`;
  const instructions = args.instructions?.trim();
  const { requester, target } = caller;
  const as = personInMarkdown({
    platform: target.platform,
    id: requester.id,
    name: requester.name || requester.id,
  });
  return {
    summary: `Watch ${channel} from this conversation as ${as}, woken by ${markdownLiteral(wakes)}`,
    ...(instructions
      ? {
          detail: {
            kind: "text" as const,
            text: `Standing instructions for each wake-up:\n${markdownLiteral(instructions)}`,
          },
        }
      : {}),
  };
}

/**
 * What unsubscribe_channel's approval card shows: the subscription the call ends — its channel,
 * trigger and instructions, whose it is when not the person's, and the conversation it wakes — as
 * the service's `toRemove` picks it, the same choice `remove` then acts on. Another person's
 * subscription that wakes some other conversation (an approver ending it by id) is named by its
 * channel, id and creator only: the card is read by everyone in this thread, and its instructions
 * and where it wakes are its creator's to show. When it would end none (nothing of that name,
 * several, or one the person may not end), only the channel asked for, so the card shows nothing
 * of a subscription they may not end, nor whether it exists. Which subscription a name picks can
 * change once the card is made (a call beside it ended the one shown, so the name now picks the
 * person's own elsewhere): the card binds its pick (its fingerprint: the one it ends, or none), and
 * an approved call whose pick changed is not run.
 */
async function unsubscribePreview(
  service: SubscriptionToolsService,
  channel: string,
  request: ConversationExecutionRequest,
): Promise<ToolPreview> {
  const caller = callerOf(request);
  const asked = literalLine(channel, CHANNEL_ARG_CHARS);
  const endsNone = "ends none";
  if (typeof caller === "string")
    return { summary: `Stop watching ${asked} (will be refused: ${caller})`, fingerprint: endsNone };
  const owner = ownerOf(caller);
  const removal = await service.toRemove(owner, channel);
  if (!removal.ok) return { summary: `Stop watching ${asked}`, fingerprint: endsNone };
  const { subscription } = removal;
  const fingerprint = `ends ${subscription.id}`;
  const own = isCreatedBy(subscription, owner);
  const whose = own ? "" : ` (${creatorShown(subscription)}'s subscription)`;
  if (!own && subscription.sessionId !== caller.sessionId)
    return {
      summary: `Stop watching ${channelShown(subscription.channelRef)} [${subscription.id}]${whose}`,
      fingerprint,
    };
  // A shared thread is not shown a subscription made elsewhere (its channel, where it wakes), as removal's reply.
  if (!shownTo(owner, subscription))
    return {
      summary: `Stop watching ${subscription.id}; it no longer wakes the conversation it was made in`,
      fingerprint,
    };
  return {
    summary: `Stop watching ${describeSubscription(subscription)} [${subscription.id}]${whose}; it no longer wakes ${wakesWhere(subscription, caller.sessionId)}`,
    fingerprint,
  };
}

/** Build the four subscription tools over a service. */
export function createSubscriptionTools(service: SubscriptionToolsService): readonly AnyTool[] {
  const subscribe = channelTool({
    name: "subscribe_channel",
    description:
      "Watch a Slack channel or Telegram group/topic for this conversation: matching new messages wake you here " +
      "(batched) as channel content, with the instructions given. Only for channels the person asking is a member of.",
    inputSchema: subscribeSchema,
    category: "write",
    concurrent: false,
    // Every message it wakes this conversation with is read into it, as catch_up's would be.
    widensAudience: readsChannelIn(
      (channel) => `from now on it reads the messages of ${channel} that wake this conversation into it`,
    ),
    run: (args, { request, approvedByPerson }) =>
      asPerson(request, (caller) =>
        service.subscribe(caller, {
          ...args,
          instructionsBy: approvedByPerson === true ? "person" : "agent",
        }),
      ),
    preview: subscribePreview,
  });
  const unsubscribe = channelTool({
    name: "unsubscribe_channel",
    description:
      "Stop watching a channel: this conversation's subscription to it, else one of the person's own " +
      "subscriptions in any of their conversations. Only a subscription's creator or a configured approver can cancel it.",
    inputSchema: unsubscribeSchema,
    // It ends a standing item, maybe another conversation's: a person decides, as for creating one.
    category: "write",
    concurrent: false,
    run: (args, { request }) => asPerson(request, (caller) => service.remove(ownerOf(caller), args.channel)),
    preview: (args, request) => unsubscribePreview(service, args.channel, request),
    // The card names the subscription a name picks when it is made; the pick may change before the run.
    bindsPreview: true,
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
    widensAudience: (_args, request) =>
      listingWidensAudience(request, "the person's subscriptions and their instructions"),
    async execute(_args, context) {
      const caller = callerOf(context.request);
      if (typeof caller === "string") return fail(caller);
      return ok(
        personLines(await service.listForPerson(ownerOf(caller)), caller.sessionId, asWritten).join("\n"),
      );
    },
  });
  const catchUp = channelTool({
    name: "catch_up",
    description:
      "Read the messages of a channel this conversation has not read yet (or those since a date), oldest first, " +
      "with author and time. Calling it again continues where it stopped. Only for channels the person asking is in.",
    inputSchema: catchUpSchema,
    category: "read",
    concurrent: true,
    readsOutside: true,
    widensAudience: readsChannelIn((channel) => `it reads ${channel} into this conversation`),
    async run(args, { request }) {
      const reader = await catchUpReader(service, request, args.channel);
      if (typeof reader === "string") return { ok: false, message: reader };
      return service.catchUp(reader.caller, { ...args, channel: reader.channel });
    },
  });
  return Object.freeze([subscribe, unsubscribe, list, catchUp]);
}
