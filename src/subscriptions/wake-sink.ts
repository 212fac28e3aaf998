/**
 * The session layer's side of wake-ups: the batch a subscribing session is woken with, the sink
 * that starts or queues that turn, and the notifier that posts notices into a subscriber's thread.
 */
import type { ThreadTarget } from "../core/thread-target.js";
import type { BufferEntry } from "./buffer-entry.js";
import type { Subscription } from "./subscription.js";
import type { WakeInput } from "./wake-prompt.js";

/** A wake-up as the session layer receives it. */
export interface WakeBatch {
  /** The matched messages, oldest first. */
  readonly entries: readonly BufferEntry[];
  /** Older matches left out of an oversized batch (in the buffer for catch_up unless it dropped them). */
  readonly omitted: number;
  /** The prompt and the `channelContent` provenance to put on the request. */
  readonly input: WakeInput;
}

/**
 * Thrown by a WakeSink when the subscribing session takes no more turns (unknown, or replaced
 * with "new" in its thread) or the subscriber may no longer use the bot there: the subscription is
 * closed and the thread told why.
 */
export class SubscriberGoneError extends Error {
  override readonly name = "SubscriberGoneError";
}

/** The session layer's side of wake-ups. */
export interface WakeSink {
  /**
   * Start (or queue) a turn of `subscription.sessionId` in `subscription.subscriberTarget` with
   * prompt `batch.input.text`, requester `subscription.createdBy`, and
   * `metadata.channelContent = batch.input.channelContent`. Resolve once accepted; reject with a
   * SubscriberGoneError when the session is gone or the subscriber may no longer use the bot in
   * its thread, or with any error when the turn cannot be taken
   * now (the batch is then tried again after a pause).
   */
  wake(subscription: Subscription, batch: WakeBatch): Promise<void>;
  /**
   * Whether the session is running a turn now, in any process (its batch then waits for
   * `sessionIdle` or a later check); a promise when that takes a look at the shared store.
   */
  isBusy(sessionId: string): boolean | Promise<boolean>;
}

/** Posts a short notice into a subscriber's thread (e.g. ThreadOutputFactory(target).postText). */
export type SubscriberNotifier = (target: ThreadTarget, text: string) => Promise<void>;
