/**
 * Subscription text: how subscriptions read for people and the model — in tool replies,
 * list_subscriptions, the `subscriptions` command (a person's, across conversations, saying which
 * conversation each wakes) and the thread's `status` command.
 */
import { personInMarkdown } from "../core/person-text.js";
import type { ThreadTarget } from "../core/thread-target.js";
import { quoteOf } from "./channel-content-format.js";
import { channelLabel, type Subscription } from "./subscription.js";
import { describeTrigger } from "./triggers.js";

/** "#deploys (slack, keywords: fail, error; instructions: "tell me…")". */
export function describeSubscription(subscription: Subscription): string {
  const parts = [subscription.channelRef.platform, describeTrigger(subscription.trigger)];
  const details = parts.join(", ");
  const instructions =
    subscription.instructions === undefined ? "" : `; instructions: "${quoteOf(subscription.instructions)}"`;
  return `${channelLabel(subscription.channelRef)} (${details}${instructions})`;
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
export function subscriptionLine(subscription: Subscription): string {
  const since = subscription.createdAt.slice(0, 10);
  return `- ${describeSubscription(subscription)} — since ${since} by ${creatorShown(subscription)} [${subscription.id}]`;
}

/** The `status` lines for a session's subscriptions. */
export function statusLines(subscriptions: readonly Subscription[]): readonly string[] {
  if (subscriptions.length === 0) return ["Subscriptions: none"];
  return [`Subscriptions (${subscriptions.length}):`, ...subscriptions.map(subscriptionLine)];
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
): readonly string[] {
  if (subscriptions.length === 0) return ["Your subscriptions: none"];
  return [
    `Your subscriptions (${subscriptions.length}):`,
    ...subscriptions.map((s) => `${subscriptionLine(s)} — wakes ${wakesWhere(s, here)}`),
  ];
}
