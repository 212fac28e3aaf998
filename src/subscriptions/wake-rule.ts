/**
 * Which buffered message wakes a subscription: never the bot's own messages, never what the
 * subscribing thread itself says (the loop guards), and otherwise a message in the
 * subscription's scope that its trigger matches. Pure, so live observation and the rebuild after
 * a restart apply the same rule.
 */
import type { BufferEntry } from "./buffer-entry.js";
import type { BotIdentity } from "./platform-directory.js";
import { inScope, type Subscription } from "./subscription.js";
import { matchesTrigger } from "./triggers.js";

/** Whether `entry` wakes `subscription` (`bot`: the bot's identity in that workspace, if known). */
export function wakesSubscription(
  subscription: Subscription,
  entry: BufferEntry,
  bot: BotIdentity | undefined,
): boolean {
  if (bot && entry.author.id === bot.userId) return false;
  const target = subscription.subscriberTarget;
  const ref = subscription.channelRef;
  const sameChannel =
    target.platform === ref.platform && target.workspace === ref.workspace && target.channel === ref.channel;
  if (
    sameChannel &&
    (target.thread === undefined || target.thread === entry.thread || target.thread === entry.id)
  )
    return false;
  return inScope(ref, entry.thread) && matchesTrigger(subscription.trigger, entry, bot);
}
