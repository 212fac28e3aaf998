/**
 * Wake delivery: a subscription's ready batch of matched messages, handed to the subscribing
 * session. The subscription is re-read first (one removed meanwhile gets nothing), and the
 * subscriber's membership of the watched channel re-checked: one who left it ends the
 * subscription, as does a session the sink finds gone. Any other failure before the sink accepted
 * the wake-up (the platform not connected yet, a membership check that failed, a session layer
 * draining) rejects, and the scheduler tries the batch again; nothing after acceptance does. After
 * a wake-up the subscription's wake marker and the session's read cursor move past what was
 * delivered. A batch whose subscription's hand-overs have failed for an hour (wake-failures.ts)
 * tells the subscriber so when it fails too, once per run across processes (failure-notices.ts;
 * a notice that could not be posted is asked for again by the next failing try). The batches
 * pending when a process stopped are rebuilt from the buffer after the wake marker by
 * pending-rebuild.ts.
 */
import { type BufferPosition, positionOf } from "./buffer-entry.js";
import type { ChannelBuffer } from "./channel-buffer.js";
import type { DirectoryLookup } from "./channel-access.js";
import type { FailureNotices } from "./failure-notices.js";
import type { ReadCursors } from "./read-cursors.js";
import { channelKeyOf, type Subscription, scopeKeyOf, watchedSince } from "./subscription.js";
import type { SubscriptionRegistry } from "./subscription-registry.js";
import type { SubscriptionSettings } from "./subscription-settings.js";
import { channelShown, creatorShown } from "./subscription-text.js";
import { renderWakeInput } from "./wake-prompt.js";
import { NoticeNotPostedError, type ReadyBatch } from "./wake-contract.js";
import { SubscriberGoneError, type WakeSink } from "./wake-sink.js";

export interface WakeDeliveryDeps {
  readonly registry: SubscriptionRegistry;
  readonly directories: DirectoryLookup;
  readonly buffer: ChannelBuffer;
  readonly cursors: ReadCursors;
  readonly settings: SubscriptionSettings;
  readonly sink: WakeSink;
  /** End a subscription: its index entries, pending batch, read cursor and, last in its channel, the buffer. */
  readonly close: (subscription: Subscription) => Promise<void>;
  /** Whether a subscriber was told their wake-ups keep failing (shared by the processes). */
  readonly notices: FailureNotices;
  /** Tell the subscribing conversation about its subscription: whether it was posted (else `onError`). */
  readonly tell: (subscription: Subscription, text: string) => Promise<boolean>;
  readonly onError: (error: unknown, context: string) => void;
}

/** Delivers ready batches to their sessions. */
export class WakeDelivery {
  constructor(private readonly deps: WakeDeliveryDeps) {}

  /**
   * Hand a ready batch to the subscriber's session (see the module comment): rejects only when it
   * was not delivered; a failure to record the delivery goes to `onError`.
   */
  async deliver(ready: ReadyBatch): Promise<void> {
    const subscription = await this.deps.registry.current(ready.subscriptionId);
    const last = ready.items.at(-1);
    if (!subscription || !last) return;
    try {
      await this.handOver(subscription, ready, last.position);
    } catch (error) {
      if (ready.tellIfFails) await this.tellFailing(subscription, error);
      throw error;
    }
    await this.deps.notices.release(subscription.id).catch((error: unknown) => {
      this.deps.onError(error, `ending the failure notice of subscription ${subscription.id}`);
    });
  }

  /**
   * Hand-overs have failed for an hour: tell the subscriber, unless this run was told already (by
   * any process: failure-notices.ts). Throws NoticeNotPostedError when the notice could not be posted.
   */
  private async tellFailing(subscription: Subscription, failure: unknown): Promise<void> {
    const { id, channelRef } = subscription;
    const first = await this.deps.notices.claim(id).catch((error: unknown) => {
      this.deps.onError(error, `marking the failure notice of subscription ${id}`);
      return true;
    });
    if (!first) return;
    const posted = await this.deps.tell(
      subscription,
      `For over an hour I have not been able to wake this thread for new messages in ${channelShown(channelRef)} (subscription ${id}). I keep trying every few minutes; meanwhile catch_up shows what came.`,
    );
    if (posted) return;
    await this.deps.notices.release(id).catch(() => undefined);
    throw new NoticeNotPostedError(failure);
  }

  /** `deliver` of a subscription that is still there: rejects when the wake-up was not handed over. */
  private async handOver(subscription: Subscription, ready: ReadyBatch, last: BufferPosition): Promise<void> {
    // The notices are markdown: a name or chat title in them is whatever its owner typed.
    const label = channelShown(subscription.channelRef);
    if (!(await this.subscriberIsMember(subscription))) {
      await this.deps.close(subscription);
      await this.deps.tell(
        subscription,
        `${creatorShown(subscription)} is no longer a member of ${label}, so I stopped watching it for this thread (subscription ${subscription.id} is closed).`,
      );
      return;
    }
    const entries = ready.items.map((item) => item.entry);
    const input = renderWakeInput(subscription, entries, ready.omitted);
    try {
      await this.deps.sink.wake(subscription, { entries, omitted: ready.omitted, input });
    } catch (error) {
      if (!(error instanceof SubscriberGoneError)) throw error;
      await this.deps.close(subscription);
      await this.deps.tell(
        subscription,
        `I stopped watching ${label} for this thread (subscription ${subscription.id} is closed): ${error.message}. Ask me again to watch it.`,
      );
      return;
    }
    try {
      await this.deps.registry.markWoken(subscription.id, last);
      await this.markRead(subscription, new Set(entries.map((e) => e.seq)), last);
    } catch (error) {
      // Delivered all the same: trying again would wake the session twice (a restart may, from the marker).
      this.deps.onError(error, `recording the wake-up of subscription ${subscription.id}`);
    }
  }

  /**
   * Whether the subscriber is still a member of the watched channel: a wake-up hands its messages
   * to them, so it must not outlive their access. Throws when the platform cannot say (not
   * connected yet, or its check failed): the batch is tried again.
   */
  private async subscriberIsMember(subscription: Subscription): Promise<boolean> {
    const ref = subscription.channelRef;
    const directory = this.deps.directories.find(ref.platform, ref.workspace);
    if (!directory)
      throw new Error(`${ref.platform} (${ref.workspace}) is not connected: cannot check membership`);
    return directory.isMember(ref.channel, subscription.createdBy.id);
  }

  /**
   * After a wake-up the session has read the delivered messages: move its read cursor over the
   * unbroken run of delivered (or the bot's own) messages, so catch_up does not repeat them but
   * still shows messages the trigger skipped.
   */
  private async markRead(
    subscription: Subscription,
    delivered: Set<number>,
    last: BufferPosition,
  ): Promise<void> {
    const ref = subscription.channelRef;
    const scope = scopeKeyOf(ref);
    const read = await this.bufferAfter(
      subscription,
      await this.deps.cursors.get(subscription.sessionId, scope),
    );
    if (!read || read.epoch !== last.epoch) return;
    const bot = this.deps.directories.find(ref.platform, ref.workspace)?.bot;
    let through: BufferPosition | undefined;
    for (const entry of read.entries) {
      if (entry.seq > last.seq || !(delivered.has(entry.seq) || entry.author.id === bot?.userId)) break;
      through = positionOf(entry, read.epoch);
    }
    if (through) await this.deps.cursors.advance(subscription.sessionId, scope, through);
  }

  /** The subscription's part of its channel's buffer after `after`, or since it began watching. */
  private bufferAfter(subscription: Subscription, after: BufferPosition | undefined) {
    const ref = subscription.channelRef;
    return this.deps.buffer.read(channelKeyOf(ref), {
      ...(after ? { after } : { since: watchedSince(subscription) }),
      ...(ref.thread !== undefined ? { thread: ref.thread } : {}),
      limit: this.deps.settings.bufferMaxMessages,
    });
  }
}
