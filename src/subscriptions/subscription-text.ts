/**
 * Subscription text: how subscriptions read for people and the model — in tool replies,
 * list_subscriptions, the `subscriptions` command (a person's, across conversations, saying which
 * conversation each wakes), the thread's `status` command and the cards and notices that name
 * one. What people read is markdown, and what a person or the model wrote in it — a channel's
 * label (a chat title is whatever its owner typed), keywords, standing instructions — goes in as
 * plain text (markdownLiteral), never as a link, a mention or formatting. The model's own tool
 * replies take it as written (`asWritten`): it names channels back in its calls.
 */
import { markdownLiteral, personInMarkdown } from "../core/person-text.js";
import type { ThreadTarget } from "../core/thread-target.js";
import { quoteOf } from "./channel-content-format.js";
import { type ChannelRef, channelLabel, type Subscription } from "./subscription.js";
import { describeTrigger } from "./triggers.js";

/** A watched channel as markdown text names it: its label as plain text. */
export function channelShown(ref: ChannelRef): string {
  return markdownLiteral(channelLabel(ref));
}

/** How written text goes into a subscription's text: as plain text in markdown, or as written. */
export type Literal = (text: string) => string;

/** Written text as it is, for the model's tool replies. */
export const asWritten: Literal = (text) => text;

/** "#deploys (slack, keywords: fail, error; instructions: "tell me…")", the written parts made `literal`. */
export function describeSubscription(subscription: Subscription, literal: Literal = markdownLiteral): string {
  const parts = [subscription.channelRef.platform, literal(describeTrigger(subscription.trigger))];
  const details = parts.join(", ");
  const instructions =
    subscription.instructions === undefined
      ? ""
      : `; instructions: "${literal(quoteOf(subscription.instructions))}"`;
  return `${literal(channelLabel(subscription.channelRef))} (${details}${instructions})`;
}

/** Who created the subscription, as people read it: their name, else their id. */
function creatorName(subscription: Subscription): string {
  return subscription.createdBy.name || subscription.createdBy.id;
}

/**
 * Who created `subscription`, as markdown text names them: their name as plain text (a name is
 * whatever its owner typed, "[Approve](https://…)" included) and their user id, which it cannot fake.
 */
export function creatorShown(subscription: Subscription): string {
  const { platform } = subscription.subscriberTarget;
  const { id } = subscription.createdBy;
  return personInMarkdown({ platform, id, name: creatorName(subscription) });
}

/** One line per subscription: what, since when, by whom (name and user id), and its id. */
function subscriptionLine(subscription: Subscription, literal: Literal = markdownLiteral): string {
  const since = subscription.createdAt.slice(0, 10);
  return `- ${describeSubscription(subscription, literal)} — since ${since} by ${creatorShown(subscription)} [${subscription.id}]`;
}

/** The `status` lines for a session's subscriptions. */
export function statusLines(subscriptions: readonly Subscription[]): readonly string[] {
  if (subscriptions.length === 0) return ["Subscriptions: none"];
  return [`Subscriptions (${subscriptions.length}):`, ...subscriptions.map((s) => subscriptionLine(s))];
}

/** A conversation as people can find it: "slack D1ANA, thread 1700.1" / "telegram chat 42, topic 5". */
export function placeOf(target: ThreadTarget): string {
  const where = target.platform === "telegram" ? `chat ${target.channel}` : target.channel;
  const thread =
    target.thread === undefined
      ? ""
      : `, ${target.platform === "telegram" ? "topic" : "thread"} ${target.thread}`;
  return `${target.platform} ${where}${thread}`;
}

/** Which conversation a subscription wakes, seen from the session `here`. */
export function wakesWhere(subscription: Subscription, here: string | undefined): string {
  return subscription.sessionId === here ? "this conversation" : placeOf(subscription.subscriberTarget);
}

/** A person's subscriptions across their conversations, each saying which conversation it wakes. */
export function personLines(
  subscriptions: readonly Subscription[],
  here: string | undefined,
  literal: Literal = markdownLiteral,
): readonly string[] {
  if (subscriptions.length === 0) return ["Your subscriptions: none"];
  return [
    `Your subscriptions (${subscriptions.length}):`,
    ...subscriptions.map((s) => `${subscriptionLine(s, literal)} — wakes ${wakesWhere(s, here)}`),
  ];
}
