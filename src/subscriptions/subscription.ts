/**
 * Subscription: a session's standing request to watch one channel (a Slack channel, a Telegram
 * group, or one forum topic of it) and to be woken when a message there matches its trigger.
 * Immutable domain types, their zod schemas (for stored records and boundaries) and the keys that
 * group subscriptions by channel.
 */
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { foldedLine } from "../core/one-line.js";
import { type PlatformUser, type ThreadTarget, targetExtraSchema } from "../core/thread-target.js";

/** What wakes a subscription: every message, only mentions of the bot, or keyword matches. */
export type Trigger =
  | { readonly type: "all" }
  | { readonly type: "mention" }
  | { readonly type: "keywords"; readonly keywords: readonly string[] };

/** The watched place on a platform. */
export interface ChannelRef {
  readonly platform: string;
  /** Slack team id / Telegram "tg". */
  readonly workspace: string;
  /** Slack channel id / Telegram chat id. */
  readonly channel: string;
  /** A Telegram forum topic (or a Slack thread ts): only messages there count. */
  readonly thread?: string;
  /** "#deploys", "Ops team (topic 5)" — for people; ids stay authoritative. */
  readonly name?: string;
}

/** Whose words a subscription's instructions are: a person's (who approved them on the card) or the agent's own. */
export type InstructionsAuthor = "person" | "agent";

export interface Subscription {
  readonly id: string;
  readonly sessionId: string;
  /** Where the subscribing session lives: wake-ups are answered there, never in the channel. */
  readonly subscriberTarget: ThreadTarget;
  readonly channelRef: ChannelRef;
  readonly trigger: Trigger;
  readonly instructions?: string;
  /**
   * Whose words `instructions` are; absent (records stored before it was kept, or no instructions)
   * reads as the agent's, as a scheduled task's text does.
   */
  readonly instructionsBy?: InstructionsAuthor;
  /** ISO time. */
  readonly createdAt: string;
  /** The person who asked for it (the membership check was made for them). */
  readonly createdBy: PlatformUser;
}

/** Whether `person` (a platform user) created the subscription. */
export function isCreatedBy(
  subscription: Subscription,
  person: { readonly platform: string; readonly userId: string },
): boolean {
  return (
    subscription.createdBy.id === person.userId && subscription.subscriberTarget.platform === person.platform
  );
}

/** Longest standing instructions accepted. */
export const MAX_INSTRUCTIONS_CHARS = 2_000;
/** Most keywords, and the longest keyword, accepted for a keywords trigger. */
export const MAX_KEYWORDS = 20;
export const MAX_KEYWORD_CHARS = 60;

const idText = z.string().min(1).max(120);

/** A stored ThreadTarget. */
export const threadTargetSchema: z.ZodType<ThreadTarget> = z.object({
  platform: idText,
  workspace: idText,
  channel: idText,
  thread: idText.optional(),
  extra: targetExtraSchema.optional(),
});

/**
 * A keyword, on one line (foldedLine): it is shown inside lines of cards and listings, and a
 * keyword matches across any run of white space anyway (triggers.ts).
 */
const keywordSchema = z.string().transform(foldedLine).pipe(z.string().min(1).max(MAX_KEYWORD_CHARS));

/** A validated trigger (keywords required, non-empty and unique for the keywords type). */
export const triggerSchema: z.ZodType<Trigger> = z.discriminatedUnion("type", [
  z.object({ type: z.literal("all") }),
  z.object({ type: z.literal("mention") }),
  z.object({
    type: z.literal("keywords"),
    keywords: z
      .array(keywordSchema)
      .min(1, "give at least one keyword")
      .max(MAX_KEYWORDS)
      .transform((words) => [...new Set(words.map((w) => w.toLowerCase()))]),
  }),
]);

/** A stored ChannelRef. */
export const channelRefSchema: z.ZodType<ChannelRef> = z.object({
  platform: idText,
  workspace: idText,
  channel: idText,
  thread: idText.optional(),
  name: z.string().min(1).max(200).optional(),
});

/** A stored PlatformUser. */
export const platformUserSchema: z.ZodType<PlatformUser> = z.object({
  id: idText,
  name: z.string().max(200),
});

/** The whole shape of a subscription's id (newSubscriptionId): "sub_" + 12 hex digits. */
const SUBSCRIPTION_ID = /^sub_[0-9a-f]{12}$/;

/** A stored Subscription (the `data` of its versioned record). */
export const subscriptionSchema: z.ZodType<Subscription> = z.object({
  id: z.string().regex(SUBSCRIPTION_ID),
  sessionId: z.string().min(1).max(180),
  subscriberTarget: threadTargetSchema,
  channelRef: channelRefSchema,
  trigger: triggerSchema,
  instructions: z.string().max(MAX_INSTRUCTIONS_CHARS).optional(),
  instructionsBy: z.enum(["person", "agent"]).optional(),
  createdAt: z.iso.datetime(),
  createdBy: platformUserSchema,
});

/** Whether `id` is, whole, a subscription's id (newSubscriptionId), not merely starting like one. */
export function isSubscriptionId(id: string): boolean {
  return SUBSCRIPTION_ID.test(id);
}

/** A fresh subscription id ("sub_" + 12 hex digits). */
export function newSubscriptionId(): string {
  return `sub_${randomBytes(6).toString("hex")}`;
}

/** The buffer key of a channel: platform + workspace + channel (a topic shares its chat's buffer). */
export function channelKeyOf(ref: Pick<ChannelRef, "platform" | "workspace" | "channel">): string {
  return `${ref.platform}:${ref.workspace}:${ref.channel}`;
}

/** What a subscription or read cursor covers: the channel, narrowed to a topic / thread when set. */
export function scopeKeyOf(ref: Pick<ChannelRef, "platform" | "workspace" | "channel" | "thread">): string {
  return ref.thread === undefined ? channelKeyOf(ref) : `${channelKeyOf(ref)}/${ref.thread}`;
}

/** Whether a message in `thread` of the ref's channel falls inside the ref's scope. */
export function inScope(ref: Pick<ChannelRef, "thread">, thread: string | undefined): boolean {
  return ref.thread === undefined || ref.thread === thread;
}

/** "#deploys", or the id (and topic) when no name is known. */
export function channelLabel(ref: ChannelRef): string {
  if (ref.name !== undefined) return ref.name;
  return ref.thread === undefined ? ref.channel : `${ref.channel} (topic ${ref.thread})`;
}

/** How a channel argument names the ref exactly: its channel id, or "chat:topic" for a topic. */
export function channelArgOf(ref: Pick<ChannelRef, "channel" | "thread">): string {
  return ref.thread === undefined ? ref.channel : `${ref.channel}:${ref.thread}`;
}

/**
 * Whether `reference` names the subscription: its id, its channel id (or "chat:topic"), its scope
 * key, or its channel name with or without "#" — case-insensitively.
 */
export function isNamedBy(subscription: Subscription, reference: string): boolean {
  const wanted = reference.trim().toLowerCase().replace(/^#/, "");
  const ref = subscription.channelRef;
  const names = [subscription.id, scopeKeyOf(ref), channelArgOf(ref)];
  if (ref.name) names.push(ref.name.replace(/^#/, ""));
  return names.some((name) => name.toLowerCase() === wanted);
}

/** Freeze a subscription (and its nested records) so no holder can change it. */
export function freezeSubscription(subscription: Subscription): Subscription {
  return Object.freeze({
    ...subscription,
    subscriberTarget: Object.freeze({
      ...subscription.subscriberTarget,
      ...(subscription.subscriberTarget.extra
        ? { extra: Object.freeze({ ...subscription.subscriberTarget.extra }) }
        : {}),
    }),
    channelRef: Object.freeze({ ...subscription.channelRef }),
    trigger: Object.freeze(
      subscription.trigger.type === "keywords"
        ? { type: "keywords" as const, keywords: Object.freeze([...subscription.trigger.keywords]) }
        : { ...subscription.trigger },
    ),
    createdBy: Object.freeze({ ...subscription.createdBy }),
  });
}

/**
 * From when a subscription's channel counts as watched: its creation, to the second — platforms
 * date messages in whole seconds (Telegram), so a message sent just after subscribing may carry
 * an earlier time than the subscription's millisecond stamp.
 */
export function watchedSince(subscription: Subscription): string {
  return new Date(Math.floor(Date.parse(subscription.createdAt) / 1_000) * 1_000).toISOString();
}
