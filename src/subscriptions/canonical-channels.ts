/**
 * Stored subscriptions brought to the channel id their messages are reported under now. A platform
 * can give a channel a new id — Telegram moves a group to a new chat id when it becomes a
 * supergroup, and the group's session keeps one of the two — and a subscription stored under the
 * other id then matches none of the channel's messages. So when a workspace's directory becomes
 * usable (at open, and each time its channel connects) the channel id of each of its
 * subscriptions is asked of the directory (PlatformDirectory.canonicalChannel: only what the
 * platform itself says, never anything a person sent), and a subscription under another id is
 * rewritten to it in the store — durable, and the other processes' registries follow. One whose
 * session already watches that scope is closed instead (it would wake the session twice), as is
 * one that would now watch its own conversation. A directory that cannot say keeps the id
 * (reported), and asks again at its next registration.
 */
import { isOwnConversation } from "./channel-access.js";
import type { PlatformDirectory } from "./platform-directory.js";
import { type Subscription, scopeKeyOf } from "./subscription.js";
import type { SubscriptionRegistry } from "./subscription-registry.js";

export interface CanonicalChannelsDeps {
  readonly registry: SubscriptionRegistry;
  /** End a subscription (its record, pending batch, read cursor and, last in its channel, the buffer). */
  readonly close: (subscription: Subscription) => Promise<void>;
  /** What a subscription moved away from leaves: its read cursor there and, when unwatched, the buffer. */
  readonly leave: (subscription: Subscription) => Promise<void>;
  readonly onError: (error: unknown, context: string) => void;
}

/**
 * Bring the directory's workspace's subscriptions to their channels' current ids (see module
 * comment). Never rejects: failures go to `onError`.
 */
export async function canonicaliseChannels(
  deps: CanonicalChannelsDeps,
  directory: PlatformDirectory,
): Promise<void> {
  try {
    await moveAll(deps, directory);
  } catch (error) {
    deps.onError(error, `moving ${directory.platform} subscriptions to their channels' current ids`);
  }
}

async function moveAll(deps: CanonicalChannelsDeps, directory: PlatformDirectory): Promise<void> {
  await deps.registry.refresh();
  const inWorkspace = deps.registry
    .all()
    .filter(
      (s) => s.channelRef.platform === directory.platform && s.channelRef.workspace === directory.workspace,
    );
  for (const channel of new Set(inWorkspace.map((s) => s.channelRef.channel))) {
    let current: string;
    try {
      current = await directory.canonicalChannel(channel);
    } catch (error) {
      deps.onError(error, `finding the current id of ${directory.platform} channel ${channel}`);
      continue;
    }
    if (current === channel) continue;
    for (const subscription of inWorkspace)
      if (subscription.channelRef.channel === channel) await move(deps, subscription.id, channel, current);
  }
}

/**
 * Rewrite the subscription from channel `from` to `to`, as stored now (unless it changed meanwhile:
 * a compare-and-set, so one removed or moved elsewhere in between stays as that left it).
 */
async function move(deps: CanonicalChannelsDeps, id: string, from: string, to: string): Promise<void> {
  const subscription = await deps.registry.current(id);
  if (subscription?.channelRef.channel !== from) return;
  const ref = { ...subscription.channelRef, channel: to };
  const twin = deps.registry.find(subscription.sessionId, scopeKeyOf(ref));
  if (twin !== undefined || isOwnConversation(ref, subscription.subscriberTarget)) {
    await deps.close(subscription);
    return;
  }
  const moved = await deps.registry.update(id, (now) =>
    now.channelRef.channel === from && now.sessionId === subscription.sessionId
      ? { ...now, channelRef: { ...now.channelRef, channel: to } }
      : undefined,
  );
  if (moved) await deps.leave(subscription);
}
