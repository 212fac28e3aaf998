/**
 * The subscriptions' side of the session layer: a WakeSink that turns a wake-up into a wake turn
 * of the subscribing session (SessionManager.wake: queued in its thread, the subscriber as
 * requester, the batch's channel-content provenance on the request), and the thread commands
 * `subscriptions` (one card each, with a Cancel button) and `unsubscribe <channel>` people use
 * without asking the agent — from any of their conversations.
 */
import { isSharedThread, sessionKeyOf, type ThreadTarget } from "../core/thread-target.js";
import type { ExtraCommand } from "../sessions/extra-commands.js";
import type { ItemCanceller } from "../sessions/item-cards.js";
import type { WakeResult, WakeTurn } from "../sessions/wake-turns.js";
import type { SubscriptionService } from "./subscription-service.js";
import { SubscriberGoneError, type WakeSink } from "./wake-sink.js";
import { personLines } from "./subscription-text.js";
import { isSubscriptionId } from "./subscription.js";

/** The session layer as wake-ups need it (the SessionManager fits). */
export interface WakeableSessions {
  wake(turn: WakeTurn): Promise<WakeResult>;
  isBusy(sessionId: string): boolean | Promise<boolean>;
}

/** The session layer as the wakers (subscriptions, schedules) use it: wake-ups and notices. */
export interface NotifyingSessions extends WakeableSessions {
  notify(target: ThreadTarget, text: string): Promise<void>;
}

/** A WakeSink that starts (or queues) wake turns in the sessions' threads. */
export function sessionWakeSink(sessions: WakeableSessions): WakeSink {
  return {
    async wake(subscription, batch) {
      const result = await sessions.wake({
        sessionId: subscription.sessionId,
        target: subscription.subscriberTarget,
        prompt: batch.input.text,
        requester: subscription.createdBy,
        channelContent: batch.input.channelContent,
      });
      if (result.status === "gone" || result.status === "refused")
        throw new SubscriberGoneError(result.reason);
    },
    isBusy: (sessionId) => sessions.isBusy(sessionId),
  };
}

/**
 * `subscriptions` (the person's own, in every conversation) and `unsubscribe <channel>` (this
 * conversation's, else one of the person's own anywhere) as thread commands.
 */
export function subscriptionCommands(
  service: Pick<SubscriptionService, "remove" | "listForPerson">,
): readonly ExtraCommand[] {
  return Object.freeze([
    {
      name: "subscriptions",
      usage: "subscriptions — list your channel subscriptions, in every conversation",
      minArgs: 0,
      maxArgs: 0,
      run: async ({ sessionId, target, user }) => {
        const mine = await service.listForPerson({ platform: target.platform, userId: user.id });
        const [header = "", ...lines] = personLines(mine, sessionId);
        if (mine.length === 0) return header;
        const items = mine.map((subscription, i) => ({
          id: subscription.id,
          title: `Subscription ${subscription.id}`,
          text: (lines[i] ?? "").replace(/^- /, ""),
          here: sessionKeyOf(subscription.subscriberTarget) === sessionKeyOf(target),
        }));
        return { text: header, items };
      },
    },
    {
      name: "unsubscribe",
      usage: "unsubscribe <channel> — stop watching a channel (#name, id, chat:topic or subscription id)",
      minArgs: 1,
      maxArgs: 1,
      run: async ({ sessionId, target, user, args }) => {
        const owner = {
          sessionId,
          platform: target.platform,
          userId: user.id,
          shared: isSharedThread(target),
        };
        return (await service.remove(owner, args[0] ?? "")).message;
      },
    },
  ]);
}

/**
 * Cancels subscriptions from their listing cards: the presser's own, or anyone's for an approver.
 * A press carries the conversation it was made in, not its session: a pressed subscription of the
 * person's that wakes that conversation is in its current session (a "new" moves it along), so
 * the cancel asks as from that session, as `unsubscribe <id>` typed there does, and its reply in a
 * shared thread names the channel that thread no longer watches.
 */
export function subscriptionCanceller(
  service: Pick<SubscriptionService, "remove" | "listForPerson">,
): ItemCanceller {
  return {
    isItem: isSubscriptionId,
    async cancel(target, user, id) {
      const person = { platform: target.platform, userId: user.id };
      const here = sessionKeyOf(target);
      const pressed = (await service.listForPerson(person)).find(
        (s) => s.id === id && sessionKeyOf(s.subscriberTarget) === here,
      );
      return service.remove(
        { sessionId: pressed?.sessionId ?? "", ...person, shared: isSharedThread(target) },
        id,
      );
    },
  };
}
