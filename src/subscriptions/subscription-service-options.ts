/**
 * What the subscription service is built from (store, directories, the wake sink and notifier,
 * settings, clock, error sink, and the coordination when several processes share the store), and
 * the shapes of its requests and answers that the tools and the app pass around.
 */
import type { Coordination } from "../store/coordination/coordination.js";
import type { SlotBudget } from "../store/slot-budget.js";
import type { Store } from "../store/store.js";
import type { Clock } from "../core/clock.js";
import type { PlatformDirectory } from "./platform-directory.js";
import type { InstructionsAuthor } from "./subscription.js";
import type { SubscriptionSettings } from "./subscription-settings.js";
import type { TriggerArgs } from "./triggers.js";
import type { SubscriberNotifier, WakeSink } from "./wake-sink.js";

export interface SubscriptionServiceOptions {
  readonly store: Store;
  /** Directories known at open; channels that connect later add theirs with `registerDirectory`. */
  readonly directories: readonly PlatformDirectory[];
  readonly sink: WakeSink;
  readonly notify: SubscriberNotifier;
  readonly settings?: SubscriptionSettings;
  readonly clock?: Clock;
  /** Failures nobody awaits (a store write in observe, a failed wake-up): log them. */
  readonly onError?: (error: unknown, context: string) => void;
  /**
   * Several processes on one store: the coordination they share. The subscription catalog is
   * then shared (every process's indexes follow its changes, and are reconciled with it every
   * `reconcileMs`, default 15 s), each matched message's wake-up is claimed so it fires once, and
   * every `sweepMs` (default 60 s) the overdue batches of a process that stopped are taken over
   * (pending-sweep.ts).
   */
  readonly shared?: {
    readonly coordination: Coordination;
    readonly reconcileMs?: number;
    readonly sweepMs?: number;
  };
  /** Platform-qualified approver ids ("slack:U0123"): they may cancel anyone's subscription. */
  readonly approvers?: readonly string[];
  /**
   * Where wake-ups per subscription are counted (store/slot-budget.ts): the app's budget over the
   * 'budgets' space, so every process on the store counts together and a restart keeps the count.
   */
  readonly wakeBudget: SlotBudget;
}

/** Who manages subscriptions: a person, asking from one of their conversations. */
export interface SubscriptionOwner {
  readonly sessionId: string;
  readonly platform: string;
  readonly userId: string;
  /**
   * The asking conversation is read by several people (core/thread-target.ts isSharedThread): a
   * refusal then names only the person's subscriptions that wake it, not those of their other
   * conversations (their DMs' included, with the ids).
   */
  readonly shared?: boolean;
}

/**
 * What subscribe_channel hands `subscribe`: the call's arguments and, from the tool, whether a
 * person approved the instructions (absent: nobody said so, and they are the agent's own).
 */
export interface SubscribeArgs {
  readonly channel: string;
  readonly trigger?: TriggerArgs | undefined;
  readonly instructions?: string | undefined;
  readonly instructionsBy?: InstructionsAuthor | undefined;
}

/** What became of an observed message. */
export type ObserveResult =
  | { readonly status: "ignored" | "duplicate" | "failed" }
  | { readonly status: "invalid"; readonly reason: string }
  | { readonly status: "buffered"; readonly matched: number };

/** What `observeChange` did with an edit or deletion: the buffered copy's revision (channel-buffer.ts `Revision`), or why not. */
export type ChangeResult =
  | { readonly status: "absent" | "unchanged" | "deleted" | "edited" | "failed" }
  | { readonly status: "invalid"; readonly reason: string };
