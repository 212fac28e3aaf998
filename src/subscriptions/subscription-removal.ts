/**
 * Which subscription an unsubscribe request ends — the unsubscribe tool, the user's command and
 * the listing's Cancel button, and the approval card that shows it first, so the card and the
 * removal cannot disagree — or why it ends none, as the reply to give. Only its creator's or a
 * configured approver's request ends one: the asking session's subscription when it has one of
 * that name (another person's in a shared thread is named, not removed), else one of the person's
 * own in any of their conversations, or, for an approver, anyone's by its id.
 */
import { mayDecide } from "../approvals/authorisation.js";
import { channelLabel, isCreatedBy, isNamedBy, type Subscription } from "./subscription.js";
import type { SubscriptionOwner } from "./subscription-service-options.js";
import type { SubscriptionRegistry } from "./subscription-registry.js";
import { creatorShown, wakesWhere } from "./subscription-text.js";

/** What a removal would end: the one subscription, or why it ends none (the reply to give). */
export type Removal =
  | { readonly ok: true; readonly subscription: Subscription }
  | { readonly ok: false; readonly message: string };

/**
 * Whether a reply to `owner` may name `subscription` (its channel, the conversation it wakes):
 * always in a conversation only its person reads, and in a shared one only when it wakes that
 * conversation (the person's other conversations, their DM or a private channel, are not for the
 * people reading it).
 */
export function shownTo(owner: SubscriptionOwner, subscription: Subscription): boolean {
  return owner.shared !== true || subscription.sessionId === owner.sessionId;
}

/**
 * The one subscription named by `channel` (a subscription id, a channel id, "#name" or name,
 * "chat:topic") that `owner`'s request ends, given the person's own subscriptions (`mine`, the
 * registry refreshed) and the configured `approvers`; else the refusal.
 */
export function findRemoval(
  registry: SubscriptionRegistry,
  approvers: readonly string[],
  owner: SubscriptionOwner,
  channel: string,
  mine: readonly Subscription[],
): Removal {
  const here = registry.forSession(owner.sessionId).filter((s) => isNamedBy(s, channel));
  const approver = mayDecide(approvers, owner.platform, owner.userId);
  const matches = removable(registry, approver, owner, channel, here, mine);
  if (matches.length !== 1)
    return { ok: false, message: notRemoved(channel, matches.length, here, mine, owner) };
  return { ok: true, subscription: matches[0]! };
}

/**
 * Which subscriptions named by `channel` the person may remove: of those in the asking
 * conversation (`here`), the ones they created (all of them, for an approver); when it has none
 * of that name, their own anywhere (`mine`) and, for an approver, anyone's by its id.
 */
function removable(
  registry: SubscriptionRegistry,
  approver: boolean,
  owner: SubscriptionOwner,
  channel: string,
  here: readonly Subscription[],
  mine: readonly Subscription[],
): readonly Subscription[] {
  if (here.length > 0) return here.filter((s) => approver || isCreatedBy(s, owner));
  const othersById = (s: Subscription) =>
    approver && !isCreatedBy(s, owner) && s.id === channel.trim().toLowerCase();
  return [...mine.filter((s) => isNamedBy(s, channel)), ...registry.all().filter(othersById)];
}

/**
 * Why `channel` removed nothing (it matched `found` removable subscriptions), with the person's
 * own: all of them, or, asked in a shared conversation, those that wake it and how to see the rest.
 */
function notRemoved(
  channel: string,
  found: number,
  here: readonly Subscription[],
  mine: readonly Subscription[],
  owner: SubscriptionOwner,
): string {
  const shown = mine.filter((s) => shownTo(owner, s));
  const known =
    shown
      .map((s) => `${channelLabel(s.channelRef)} (${s.id}, wakes ${wakesWhere(s, owner.sessionId)})`)
      .join(", ") || "none";
  let why = `You have no subscription to ${channel}`;
  if (found > 1) why = `${channel} matches several of your subscriptions (name one by id)`;
  else if (here.length > 0) {
    const theirs = here.map(
      (s) => `${creatorShown(s)}'s subscription to ${channelLabel(s.channelRef)} (${s.id})`,
    );
    why = `${theirs.join(", ")} here can be cancelled only by its creator or a configured approver`;
  }
  if (!owner.shared) return `${why}. Your subscriptions: ${known}.`;
  return `${why}. Yours that wake this conversation: ${known} (ask in a direct message with me to see all of yours).`;
}
