/**
 * subscribe_channel: subscribe the caller's session to a channel, or update the caller's own
 * subscription's trigger and instructions. The channel must be one the caller may read and not the
 * asking conversation itself, the session and the person (across all their conversations, as the
 * registry counts them: it follows a shared catalog) within their numbers of subscriptions, and
 * the bot able to read the channel. Wake-ups then run as the caller, whose membership was just checked. Another
 * person's subscription to the same channel in a shared thread stays theirs: the call is refused
 * (its wake-ups already come to this conversation; only its creator changes it, and they or an
 * approver cancel it), never taken over. An update rewrites the subscription as it is stored then,
 * so one cancelled or moved meanwhile (to a new session by "new", or to the channel's new id),
 * through any process, is not brought back.
 */
import type { Caller } from "../core/thread-target.js";
import { accessChannel, type DirectoryLookup, isOwnConversation, type Outcome } from "./channel-access.js";
import type { Clock } from "../core/clock.js";
import { failureText } from "./platform-directory.js";
import {
  channelLabel,
  isCreatedBy,
  MAX_INSTRUCTIONS_CHARS,
  newSubscriptionId,
  scopeKeyOf,
  type Subscription,
} from "./subscription.js";
import type { SubscriptionRegistry } from "./subscription-registry.js";
import type { SubscribeArgs } from "./subscription-service-options.js";
import type { SubscriptionSettings } from "./subscription-settings.js";
import { asWritten, creatorShown, describeSubscription } from "./subscription-text.js";
import { parseTrigger } from "./triggers.js";

export interface SubscribeDeps {
  readonly directories: DirectoryLookup;
  readonly registry: SubscriptionRegistry;
  readonly settings: SubscriptionSettings;
  readonly clock: Clock;
}

/** Run subscribe_channel for the caller: the subscription made or updated, or why not. */
export async function subscribeChannel(
  deps: SubscribeDeps,
  caller: Caller,
  args: SubscribeArgs,
): Promise<Outcome> {
  const trigger = parseTrigger(args.trigger);
  if (!trigger.ok) return { ok: false, message: trigger.error };
  const instructions = args.instructions?.trim() || undefined;
  if (instructions !== undefined && instructions.length > MAX_INSTRUCTIONS_CHARS)
    return { ok: false, message: `instructions are limited to ${MAX_INSTRUCTIONS_CHARS} characters` };
  const access = await accessChannel(deps.directories, caller, args.channel);
  if (!access.ok) return { ok: false, message: access.message };
  const { directory, ref } = access;
  const label = channelLabel(ref);
  if (isOwnConversation(ref, caller.target))
    return { ok: false, message: `${label} is this conversation itself; I already see what is said here.` };
  await deps.registry.refresh();
  const existing = deps.registry.find(caller.sessionId, scopeKeyOf(ref));
  if (existing && !isCreatedBy(existing, { platform: caller.target.platform, userId: caller.requester.id })) {
    const creator = creatorShown(existing);
    return {
      ok: false,
      message: `${label} is already watched here by ${creator}'s subscription (${existing.id}), whose wake-ups come to this conversation. Only ${creator} can change it; they or a configured approver can cancel it, and then you can subscribe.`,
    };
  }
  if (!existing && deps.registry.forSession(caller.sessionId).length >= deps.settings.maxPerSession)
    return {
      ok: false,
      message: `This conversation already has ${deps.settings.maxPerSession} subscriptions (the limit); unsubscribe from one first.`,
    };
  const person = { platform: caller.target.platform, userId: caller.requester.id };
  const held = deps.registry.all().filter((s) => isCreatedBy(s, person)).length;
  if (!existing && held >= deps.settings.maxPerPerson)
    return {
      ok: false,
      message: `You already have ${deps.settings.maxPerPerson} channel subscriptions across your conversations, the most allowed; unsubscribe from one first (list_subscriptions shows them).`,
    };
  const canRead = await directory.ensureBotCanRead(ref.channel).catch((error: unknown) => ({
    ok: false as const,
    whatToDo: `checking my access failed: ${failureText(error)}`,
  }));
  if (!canRead.ok) return { ok: false, message: `I can't watch ${label} yet: ${canRead.whatToDo}` };
  const wanted: Subscription = {
    id: existing?.id ?? newSubscriptionId(),
    sessionId: caller.sessionId,
    subscriberTarget: caller.target,
    channelRef: ref,
    trigger: trigger.trigger,
    ...(instructions !== undefined ? { instructions, instructionsBy: args.instructionsBy ?? "agent" } : {}),
    createdAt: existing?.createdAt ?? new Date(deps.clock.now()).toISOString(),
    // Wake-ups run as the person the membership check was just made for (an update's is its creator).
    createdBy: caller.requester,
  };
  // An update rewrites the subscription only as it still is (compare-and-set): one cancelled,
  // moved to another session or moved to the channel's new id meanwhile is not brought back.
  const subscription = existing
    ? await deps.registry.update(existing.id, (now) =>
        now.sessionId === caller.sessionId &&
        isCreatedBy(now, person) &&
        scopeKeyOf(now.channelRef) === scopeKeyOf(existing.channelRef)
          ? wanted
          : undefined,
      )
    : await deps.registry.put(wanted);
  if (!subscription)
    return {
      ok: false,
      message: `Your subscription to ${label} (${existing?.id}) was cancelled or moved while I was updating it, so nothing changed; ask again to subscribe.`,
    };
  const verb = existing ? "Updated the subscription to" : "Subscribed to";
  return {
    ok: true,
    message: `${verb} ${describeSubscription(subscription, asWritten)}. Matching messages wake this conversation in batches (at most ${deps.settings.wakesPerHour} wake-ups an hour); my own messages and messages in this thread never do.`,
  };
}
