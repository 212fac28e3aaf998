/**
 * Wake hand-over: the claim-then-deliver step of one ready batch. With `claims` (wake-claims.ts,
 * several processes on one store) each matched message is claimed first, so it wakes its
 * subscription once across processes: messages delivered elsewhere leave the batch, those being
 * handed over elsewhere go to the caller for a later look, and only the claimed ones are delivered;
 * their claims are kept once the wake-up was accepted and given up when it failed. Without
 * `claims` every message is this process's. Apart from wake-scheduler.ts, which decides when a
 * batch goes; this decides which of its messages this process may hand over, and settles them.
 */
import type { WakeClaims } from "./wake-claims.js";
import type { ReadyBatch, WakeItem, WakeSchedulerOptions } from "./wake-scheduler.js";

/** The claim key of a matched message's wake-up of its subscription. */
const claimKey = (ready: ReadyBatch, item: WakeItem): string =>
  `wake:${ready.subscriptionId}:${item.position.epoch}:${item.position.seq}`;

/**
 * The batch's messages this process may deliver: all of them without `claims`; with them, those
 * whose claim it took. Messages delivered elsewhere leave the batch; those being handed over
 * elsewhere go to `elsewhere`, to be looked at again once that claim could have lapsed.
 */
export async function claimWakeItems(
  claims: WakeClaims | undefined,
  ready: ReadyBatch,
  elsewhere: (items: readonly WakeItem[]) => void,
): Promise<ReadyBatch> {
  if (!claims) return ready;
  const results = await Promise.all(ready.items.map((item) => claims.take(claimKey(ready, item))));
  const heldElsewhere = ready.items.filter((_, index) => results[index] === "elsewhere");
  if (heldElsewhere.length > 0) elsewhere(heldElsewhere);
  return { ...ready, items: ready.items.filter((_, index) => results[index] === "won") };
}

/**
 * Deliver the claimed messages (none: nothing to do); with `claims`, a claim is kept once the
 * wake-up was accepted and given up when it failed.
 */
export async function handOverClaimed(
  options: Pick<WakeSchedulerOptions, "claims" | "deliver" | "onError">,
  mine: ReadyBatch,
): Promise<void> {
  const { claims } = options;
  if (!claims) return options.deliver(mine);
  if (mine.items.length === 0) return;
  const report = (error: unknown) => options.onError(error, mine.subscriptionId);
  try {
    await options.deliver(mine);
  } catch (error) {
    await Promise.all(mine.items.map((item) => claims.release(claimKey(mine, item)).catch(report)));
    throw error;
  }
  // Delivered: a claim that could not be kept lapses in minutes (a rebuilt batch elsewhere may then wake again).
  await Promise.all(mine.items.map((item) => claims.keep(claimKey(mine, item)).catch(report)));
}
