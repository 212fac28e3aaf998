/**
 * Moving a thread's subscriptions when "new" switches it to a new session, so catch_up goes on
 * where it was and "already watched", the per-session limit, `status` and unsubscribe see them in
 * the new session. Kept apart from SubscriptionService, which delegates its `moveSession` here.
 */
import type { ReadCursors } from "./read-cursors.js";
import { scopeKeyOf } from "./subscription.js";
import type { SubscriptionRegistry } from "./subscription-registry.js";
import type { WakeScheduler } from "./wake-scheduler.js";

/** What moving a session's subscriptions needs from the service. */
export interface SessionMoveDeps {
  readonly cursors: ReadCursors;
  readonly registry: SubscriptionRegistry;
  readonly scheduler: WakeScheduler;
}

/**
 * "new" switched a thread from session `oldId` to `newId`: the read cursors of the channels
 * `oldId` read by catch_up become `newId`'s, and the subscriptions made in `oldId` (the thread's:
 * a session belongs to one thread) too — read cursor first, then the record, each as stored now
 * (the record compare-and-set: one removed meanwhile stays removed) — and their pending batches
 * wait for `newId`. Safe to repeat (what was moved is no longer `oldId`'s).
 */
export async function moveSessionSubscriptions(
  deps: SessionMoveDeps,
  oldId: string,
  newId: string,
): Promise<void> {
  await deps.cursors.moveAll(oldId, newId);
  await deps.registry.refresh();
  for (const known of deps.registry.forSession(oldId)) {
    const subscription = await deps.registry.current(known.id);
    if (subscription?.sessionId !== oldId) continue;
    await deps.cursors.move(oldId, newId, scopeKeyOf(subscription.channelRef));
    const moved = await deps.registry.update(known.id, (now) =>
      now.sessionId === oldId ? { ...now, sessionId: newId } : undefined,
    );
    if (moved) deps.scheduler.moveSession(moved.id, newId);
  }
}
