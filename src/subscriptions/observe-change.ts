/**
 * Edits and deletions of channel messages, as channel adapters report them: the buffered copy of
 * the message, if any, takes the new text or is forgotten (so catch_up no longer shows a deleted
 * message), and the batches waiting to wake on it follow. Kept apart from SubscriptionService,
 * which delegates its `observeChange` here, because revising what was seen is its own concern
 * from buffering and waking on what is new.
 */
import { describeProblems } from "../core/schema-problems.js";
import type { DirectoryLookup } from "./channel-access.js";
import type { ChannelBuffer } from "./channel-buffer.js";
import { type ObservedChange, observedChangeSchema } from "./observed-change.js";
import { channelKeyOf } from "./subscription.js";
import type { SubscriptionRegistry } from "./subscription-registry.js";
import type { ChangeResult } from "./subscription-service-options.js";
import { mentionsIdentity } from "./triggers.js";
import type { WakeScheduler } from "./wake-scheduler.js";

/** What revising an observed change needs from the service. */
export interface ObserveChangeDeps {
  readonly directories: DirectoryLookup;
  readonly buffer: ChannelBuffer;
  readonly registry: SubscriptionRegistry;
  readonly scheduler: WakeScheduler;
  readonly onError: (error: unknown, context: string) => void;
}

/**
 * Apply a message of any channel edited or deleted on the platform to its buffered copy and to
 * the batches waiting to wake on it. The buffer is looked at even where this process knows of no
 * subscription (another process may have buffered it). An edit never wakes anyone, also when the
 * new text would match a trigger the old one did not: the message is not new. Never throws;
 * failures go to `onError`.
 */
export async function observeChange(deps: ObserveChangeDeps, change: ObservedChange): Promise<ChangeResult> {
  const parsed = observedChangeSchema.safeParse(change);
  if (!parsed.success) {
    const reason = describeProblems(parsed.error);
    deps.onError(new Error(`invalid observed change: ${reason}`), "observeChange");
    return { status: "invalid", reason };
  }
  const observed = parsed.data;
  const key = channelKeyOf(observed);
  const bot = deps.directories.find(observed.platform, observed.workspace)?.bot;
  const edit =
    observed.change === "edited"
      ? { text: observed.text, mentionsBot: observed.mentionsBot || mentionsIdentity(observed.text, bot) }
      : undefined;
  let revision: Awaited<ReturnType<ChannelBuffer["revise"]>>;
  try {
    revision = await deps.buffer.revise(key, observed.id, edit);
  } catch (error) {
    deps.onError(error, `revising message ${observed.id} of ${key} (${observed.change})`);
    return { status: "failed" };
  }
  if (revision.outcome === "deleted" || revision.outcome === "edited") {
    const entry = revision.outcome === "edited" ? revision.entry : undefined;
    for (const subscription of deps.registry.forChannel(key))
      deps.scheduler.revise(subscription.id, observed.id, entry);
  }
  return { status: revision.outcome };
}
