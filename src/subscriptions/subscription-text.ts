/**
 * Subscription text: how subscriptions read for people and the model — in tool replies,
 * list_subscriptions and the thread's `status` command.
 */
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

/** One line per subscription: what, since when, by whom, and its id. */
export function subscriptionLine(subscription: Subscription): string {
  const since = subscription.createdAt.slice(0, 10);
  const by = subscription.createdBy.name || subscription.createdBy.id;
  return `- ${describeSubscription(subscription)} — since ${since} by ${by} [${subscription.id}]`;
}

/** The `status` lines for a session's subscriptions. */
export function statusLines(subscriptions: readonly Subscription[]): readonly string[] {
  if (subscriptions.length === 0) return ["Subscriptions: none"];
  return [`Subscriptions (${subscriptions.length}):`, ...subscriptions.map(subscriptionLine)];
}
