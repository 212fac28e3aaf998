/**
 * SubscriptionService: ties channel subscriptions together. Channel adapters report every message
 * they see (`observe`), and edits and deletions of them (`observeChange`, observe-change.ts: the
 * buffered copy is revised, nobody woken); messages in subscribed channels are buffered, run
 * through each subscription's trigger and loop guards, and batched into wake-ups of the
 * subscribing session, which wake-delivery.ts hands to the injected WakeSink. The tools call
 * `subscribe` (subscribe-channel.ts) / `remove` / `listFor` / `catchUp` (catch-up.ts), and
 * unsubscribe's approval card `toRemove`, the choice `remove` acts on; the session layer calls
 * `sessionIdle` after each turn, `listForSession` for `status` and `moveSession` when "new"
 * switches a thread to a new session (the thread's subscriptions follow it). A subscription is
 * removed only at its creator's or a configured approver's request. Subscriptions, buffers, read
 * cursors and wake markers live in the store, and `open` rebuilds the indexes and the pending
 * batches. One stored under a channel id the platform has since replaced moves to the current id
 * (canonical-channels.ts). With several processes, each also takes over the overdue batches of one
 * that stopped (pending-sweep.ts).
 *
 * With several processes on one store (`shared`), the catalog of subscriptions is shared and the
 * registry's indexes follow the other processes' changes (subscription-registry.ts). `observe`
 * still answers from memory; what a person or the agent is shown or acts on — listings, `status`
 * lines, subscribe, unsubscribe, the bot's removal — is checked against the catalog first, and a
 * wake-up re-reads its subscription. A wake-up also re-checks that the subscriber is still a
 * member of the watched channel; one who left it ends the subscription.
 */
import { describeProblems } from "../core/schema-problems.js";
import type { KeyValueSpace } from "../store/store.js";
import { type CanonicalChannelsDeps, canonicaliseChannels } from "./canonical-channels.js";
import { catchUp as runCatchUp, type CatchUpArgs } from "./catch-up.js";
import { ChannelBuffer } from "./channel-buffer.js";
import { type PendingRebuildDeps, rebuildPending } from "./pending-rebuild.js";
import { PendingSweep } from "./pending-sweep.js";
import { moveSessionSubscriptions } from "./session-move.js";
import type { Caller } from "../core/thread-target.js";
import { DirectoryLookup, type Outcome } from "./channel-access.js";
import { type Clock, systemClock } from "../core/clock.js";
import { observeChange as applyChange } from "./observe-change.js";
import type { ObservedChange } from "./observed-change.js";
import { entryInputOf, type ObservedMessage, observedMessageSchema } from "./observed-message.js";
import type { PlatformDirectory } from "./platform-directory.js";
import { ReadCursors } from "./read-cursors.js";
import {
  type ChannelRef,
  channelKeyOf,
  channelLabel,
  inScope,
  isCreatedBy,
  type Subscription,
  scopeKeyOf,
} from "./subscription.js";
import { SharedCatalog } from "./shared-catalog.js";
import { subscribeChannel } from "./subscribe-channel.js";
import { findRemoval, type Removal, shownTo } from "./subscription-removal.js";
import { FailureNotices } from "./failure-notices.js";
import { LocalCatalog } from "./subscription-catalog.js";
import { SubscriptionRegistry } from "./subscription-registry.js";
import { DEFAULT_SUBSCRIPTION_SETTINGS, type SubscriptionSettings } from "./subscription-settings.js";
import { channelShown, creatorShown, statusLines, wakesWhere } from "./subscription-text.js";
import { mentionsIdentity } from "./triggers.js";
import type {
  ChangeResult,
  ObserveResult,
  SubscribeArgs,
  SubscriptionOwner,
  SubscriptionServiceOptions,
} from "./subscription-service-options.js";
import { wakesSubscription } from "./wake-rule.js";
import { WakeDelivery } from "./wake-delivery.js";
import { StoreWakeClaims } from "./wake-claims.js";
import { WakeScheduler } from "./wake-scheduler.js";

export type { Removal } from "./subscription-removal.js";

/** How often the indexes are reconciled with a shared catalog by default. */
const DEFAULT_RECONCILE_MS = 15_000;

/** How often, by default, each of several processes takes over overdue batches of one that stopped. */
const DEFAULT_SWEEP_MS = 60_000;

/** Channel subscriptions: buffering, triggers, wake-ups, tools' requests and lifecycle. */
export class SubscriptionService {
  private readonly buffer: ChannelBuffer;
  private readonly cursors: ReadCursors;
  private readonly scheduler: WakeScheduler;
  private readonly delivery: WakeDelivery;
  /** What rebuilding pending batches from the buffer needs (pending-rebuild.ts). */
  private readonly rebuild: PendingRebuildDeps;
  private readonly directories: DirectoryLookup;
  private readonly settings: SubscriptionSettings;
  private readonly clock: Clock;
  private readonly onError: (error: unknown, context: string) => void;
  private readonly moves: CanonicalChannelsDeps;
  /** With several processes: the periodic take-over of a stopped process's batches. */
  private readonly sweep: PendingSweep | undefined;

  private constructor(
    private readonly registry: SubscriptionRegistry,
    private readonly options: SubscriptionServiceOptions,
    /** The "subscriptions" space the registry reads, where the wake markers are too. */
    subscriptions: KeyValueSpace,
  ) {
    const settings = options.settings ?? DEFAULT_SUBSCRIPTION_SETTINGS;
    this.settings = settings;
    this.clock = options.clock ?? systemClock;
    this.onError = options.onError ?? (() => undefined);
    this.directories = new DirectoryLookup(options.directories);
    const buffers = options.store.space("buffers");
    this.buffer = new ChannelBuffer(buffers, {
      maxEntries: settings.bufferMaxMessages,
      maxAgeMs: settings.bufferMaxAgeMs,
      clock: this.clock,
      shared: options.shared !== undefined,
    });
    this.cursors = new ReadCursors(buffers, settings.bufferMaxAgeMs + 86_400_000);
    this.scheduler = new WakeScheduler({
      debounceMs: settings.debounceMs,
      maxBatch: settings.maxBatch,
      maxWaitMs: settings.maxWaitMs,
      maxWakesPerHour: settings.wakesPerHour,
      busyRetryMs: settings.busyRetryMs,
      clock: this.clock,
      isBusy: (sessionId) => options.sink.isBusy(sessionId),
      deliver: (batch) => this.delivery.deliver(batch),
      onError: (error, id) => this.onError(error, `waking subscription ${id}`),
      ...(options.shared ? { claims: new StoreWakeClaims(options.store.space("dedupe"), this.onError) } : {}),
      budget: options.wakeBudget,
    });
    this.moves = {
      registry,
      close: (subscription) => this.close(subscription),
      leave: (subscription) => this.leave(subscription),
      onError: this.onError,
    };
    this.delivery = new WakeDelivery({
      registry,
      directories: this.directories,
      buffer: this.buffer,
      cursors: this.cursors,
      settings,
      sink: options.sink,
      notices: new FailureNotices(options.store.space("dedupe")),
      close: (subscription) => this.close(subscription),
      tell: (subscription, text) => this.tell(subscription, text),
      onError: this.onError,
    });
    this.rebuild = {
      markers: subscriptions,
      directories: this.directories,
      buffer: this.buffer,
      bufferMaxMessages: settings.bufferMaxMessages,
      scheduler: this.scheduler,
      onError: this.onError,
    };
    const { shared } = options;
    this.sweep = shared
      ? new PendingSweep({
          clock: this.clock,
          intervalMs: shared.sweepMs ?? DEFAULT_SWEEP_MS,
          settings,
          subscriptions: () => registry.all(),
          rebuild: (subscriptions, bufferedBy, stopped) =>
            rebuildPending(this.rebuild, subscriptions, { bufferedBy, stopped }),
          onError: this.onError,
        })
      : undefined;
  }

  /** Load subscriptions and re-arm the wake-ups that were pending when the process stopped. */
  static async open(options: SubscriptionServiceOptions): Promise<SubscriptionService> {
    const onError = options.onError ?? (() => undefined);
    const space = options.store.space("subscriptions");
    const { shared } = options;
    // A subscription removed elsewhere cancels its batch here (none can wait before the service exists).
    let service: SubscriptionService | undefined;
    const registry = await SubscriptionRegistry.open(space, {
      catalog: shared
        ? await SharedCatalog.open(shared.coordination, space, onError)
        : new LocalCatalog(space),
      onError,
      onGone: (id) => service?.scheduler.cancel(id),
      ...(shared
        ? {
            reconcile: {
              clock: options.clock ?? systemClock,
              intervalMs: shared.reconcileMs ?? DEFAULT_RECONCILE_MS,
            },
          }
        : {}),
    });
    service = new SubscriptionService(registry, options, space);
    for (const directory of options.directories) await canonicaliseChannels(service.moves, directory);
    await rebuildPending(service.rebuild, registry.all());
    return service;
  }

  /**
   * A platform workspace's channel connected: its subscriptions move to their channels' current
   * ids (canonical-channels.ts), then its batches rebuilt at open go. Never rejects.
   */
  async registerDirectory(directory: PlatformDirectory): Promise<void> {
    this.directories.add(directory);
    await canonicaliseChannels(this.moves, directory);
    for (const subscription of this.registry.all()) {
      const ref = subscription.channelRef;
      if (ref.platform === directory.platform && ref.workspace === directory.workspace)
        this.scheduler.retryNow(subscription.id);
    }
  }

  /** Report one message seen in any channel. Never throws; failures go to `onError`. */
  async observe(message: ObservedMessage): Promise<ObserveResult> {
    const parsed = observedMessageSchema.safeParse(message);
    if (!parsed.success) {
      const reason = describeProblems(parsed.error);
      this.onError(new Error(`invalid observed message: ${reason}`), "observe");
      return { status: "invalid", reason };
    }
    const observed = parsed.data;
    const key = channelKeyOf(observed);
    const watching = this.registry.forChannel(key).filter((s) => inScope(s.channelRef, observed.thread));
    if (watching.length === 0) return { status: "ignored" };
    const bot = this.directories.find(observed.platform, observed.workspace)?.bot;
    const mentions = observed.mentionsBot || mentionsIdentity(observed.text, bot);
    let appended: Awaited<ReturnType<ChannelBuffer["append"]>>;
    try {
      appended = await this.buffer.append(key, entryInputOf(observed, mentions));
    } catch (error) {
      this.onError(error, `buffering message ${observed.id} of ${key}`);
      return { status: "failed" };
    }
    if (!appended) return { status: "duplicate" };
    let matched = 0;
    for (const subscription of watching) {
      if (!wakesSubscription(subscription, appended.entry, bot)) continue;
      this.scheduler.add(subscription.id, subscription.sessionId, appended);
      matched += 1;
    }
    return { status: "buffered", matched };
  }

  /**
   * Report a message of any channel edited or deleted on the platform: its buffered copy, if any,
   * takes the new text or is forgotten, and the batches waiting to wake on it follow; an edit never
   * wakes anyone (observe-change.ts). Never throws; failures go to `onError`.
   */
  async observeChange(change: ObservedChange): Promise<ChangeResult> {
    return applyChange(
      {
        directories: this.directories,
        buffer: this.buffer,
        registry: this.registry,
        scheduler: this.scheduler,
        onError: this.onError,
      },
      change,
    );
  }

  /** Subscribe the caller's session to a channel (or update its trigger and instructions). */
  async subscribe(caller: Caller, args: SubscribeArgs): Promise<Outcome> {
    return subscribeChannel(
      { directories: this.directories, registry: this.registry, settings: this.settings, clock: this.clock },
      caller,
      args,
    );
  }

  /** catch_up for the caller: unread messages of a channel, oldest first; advances the read cursor. */
  async catchUp(caller: Caller, args: CatchUpArgs): Promise<Outcome> {
    return runCatchUp(
      { directories: this.directories, buffer: this.buffer, cursors: this.cursors, settings: this.settings },
      caller,
      args,
    );
  }

  /**
   * Remove a subscription to `channel` (a subscription id, a channel id, "#name" or name,
   * "chat:topic"), for the unsubscribe tool, the user's command and the listing's Cancel button:
   * the one `toRemove` picks, else nothing. Resolves with the reply.
   */
  async remove(owner: SubscriptionOwner, channel: string): Promise<Outcome> {
    const removal = await this.toRemove(owner, channel);
    if (!removal.ok) return removal;
    const { subscription } = removal;
    await this.close(subscription);
    const whose = isCreatedBy(subscription, owner) ? "" : ` (${creatorShown(subscription)}'s subscription)`;
    if (!shownTo(owner, subscription))
      return {
        ok: true,
        message: `Unsubscribed ${subscription.id}${whose}; it no longer wakes the conversation it was made in.`,
      };
    return {
      ok: true,
      message: `Unsubscribed from ${channelLabel(subscription.channelRef)}${whose}; it no longer wakes ${wakesWhere(subscription, owner.sessionId)}.`,
    };
  }

  /**
   * The one subscription `remove(owner, channel)` would end, or its refusal — what the
   * unsubscribe tool's approval card shows, so the card and the removal cannot disagree
   * (subscription-removal.ts).
   */
  async toRemove(owner: SubscriptionOwner, channel: string): Promise<Removal> {
    const mine = await this.listForPerson(owner);
    return findRemoval(this.registry, this.options.approvers ?? [], owner, channel, mine);
  }

  /** The person's own subscriptions across all their conversations, oldest first. */
  async listForPerson(
    person: Pick<SubscriptionOwner, "platform" | "userId">,
  ): Promise<readonly Subscription[]> {
    await this.registry.refresh();
    return this.registry
      .all()
      .filter((s) => isCreatedBy(s, person))
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /** The session's subscriptions, oldest first. */
  async listFor(sessionId: string): Promise<readonly Subscription[]> {
    await this.registry.refresh();
    return this.registry.forSession(sessionId);
  }

  /** Lines for the `status` command. */
  async listForSession(sessionId: string): Promise<readonly string[]> {
    return statusLines(await this.listFor(sessionId));
  }

  /** The bot was removed from a channel: close its subscriptions there and tell each subscriber. */
  async onBotRemoved(channel: Pick<ChannelRef, "platform" | "workspace" | "channel">): Promise<number> {
    const key = channelKeyOf(channel);
    await this.registry.refresh();
    const closed = this.registry.forChannel(key);
    for (const subscription of closed) {
      await this.close(subscription);
      const text = `I was removed from ${channelShown(subscription.channelRef)}, so I stopped watching it (subscription ${subscription.id} is closed). Add me back and ask again to resume.`;
      await this.tell(subscription, text);
    }
    await this.buffer.drop(key);
    return closed.length;
  }

  /**
   * "new" switched a thread from session `oldId` to `newId`: its read cursors, subscriptions and
   * their pending batches become `newId`'s (session-move.ts). Safe to repeat.
   */
  async moveSession(oldId: string, newId: string): Promise<void> {
    await moveSessionSubscriptions(
      { cursors: this.cursors, registry: this.registry, scheduler: this.scheduler },
      oldId,
      newId,
    );
  }

  /** The session's turn ended: wake-ups held back while it was busy go now. */
  sessionIdle(sessionId: string): void {
    this.scheduler.sessionIdle(sessionId);
  }

  /** Resolves once a take-over sweep under way has finished and wake-ups started were handed to the sink. */
  async settled(): Promise<void> {
    await this.sweep?.settled();
    await this.scheduler.settled();
  }

  /**
   * Stop timers and following other processes' changes, and wait for deliveries in flight
   * (pending batches are rebuilt by the next `open`, and by the other processes' sweeps).
   */
  async shutdown(): Promise<void> {
    await this.sweep?.close();
    await this.scheduler.close();
    await this.registry.close();
  }

  /** Post `text` into the subscriber's thread: whether it was posted (a failure goes to `onError`). */
  private async tell(subscription: Subscription, text: string): Promise<boolean> {
    try {
      await this.options.notify(subscription.subscriberTarget, text);
      return true;
    } catch (error) {
      this.onError(error, `telling session ${subscription.sessionId} about subscription ${subscription.id}`);
      return false;
    }
  }

  private async close(subscription: Subscription): Promise<void> {
    await this.registry.remove(subscription.id);
    this.scheduler.cancel(subscription.id);
    await this.leave(subscription);
  }

  /** What a subscription ended or moved to a new channel id leaves: read cursor, last watcher's buffer. */
  private async leave(subscription: Subscription): Promise<void> {
    await this.cursors.delete(subscription.sessionId, scopeKeyOf(subscription.channelRef));
    const key = channelKeyOf(subscription.channelRef);
    await this.registry.refresh();
    if (this.registry.forChannel(key).length === 0) await this.buffer.drop(key);
  }
}
