/**
 * Wake hand-over: the claim-then-deliver step of one ready batch. With `claims` (wake-claims.ts,
 * several processes on one store) each matched message is claimed first, so it wakes its
 * subscription once across processes: messages delivered elsewhere leave the batch, those being
 * handed over elsewhere go to the caller for a later look, and only the claimed ones are
 * delivered; their claims are renewed while the hand-over is under way (however long the session
 * layer takes to accept it, no other process wakes for them meanwhile), kept once the wake-up was
 * accepted and given up when it failed. Without `claims` every message is this process's. Apart
 * from wake-scheduler.ts, which decides when a batch goes; this decides which of its messages
 * this process may hand over, and settles them.
 */
import type { Clock, TimerHandle } from "../core/clock.js";
import { WAKE_CLAIM_TAKE_MS, type WakeClaims } from "./wake-claims.js";
import type { ReadyBatch, WakeItem, WakeSchedulerOptions } from "./wake-contract.js";

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

/** How often the claims of a hand-over still under way are renewed: three times within a claim's life. */
export const WAKE_CLAIM_RENEW_MS = WAKE_CLAIM_TAKE_MS / 3;

/**
 * Deliver the claimed messages (none: nothing to do); with `claims`, a claim is renewed while
 * `deliver` runs, kept once the wake-up was accepted and given up when it failed.
 */
export async function handOverClaimed(
  options: Pick<WakeSchedulerOptions, "claims" | "clock" | "deliver" | "onError">,
  mine: ReadyBatch,
): Promise<void> {
  const { claims } = options;
  if (!claims) return options.deliver(mine);
  if (mine.items.length === 0) return;
  const report = (error: unknown) => options.onError(error, mine.subscriptionId);
  const keys = mine.items.map((item) => claimKey(mine, item));
  const renewal = renewWhileUnderWay(claims, options.clock, keys, report);
  try {
    await options.deliver(mine);
  } catch (error) {
    await renewal.stop();
    await Promise.all(keys.map((key) => claims.release(key).catch(report)));
    throw error;
  }
  await renewal.stop();
  // Delivered: a claim that could not be kept lapses in minutes (a rebuilt batch elsewhere may then wake again).
  await Promise.all(keys.map((key) => claims.keep(key).catch(report)));
}

/**
 * Renew the claims on `keys` every WAKE_CLAIM_RENEW_MS until `stop`, which waits for a renewal
 * under way (so none lands after the keep or release that follows). A claim found no longer this
 * process's (it lapsed, the process having stalled for minutes) is reported: another process may
 * wake for its message too.
 */
function renewWhileUnderWay(
  claims: WakeClaims,
  clock: Clock,
  keys: readonly string[],
  report: (error: unknown) => void,
): { stop(): Promise<void> } {
  let timer: TimerHandle | undefined;
  let renewing: Promise<void> = Promise.resolve();
  let stopped = false;
  const renewAll = async () => {
    const held = await Promise.all(keys.map((key) => claims.renew(key)));
    const lost = keys.filter((_, index) => !held[index]);
    if (lost.length > 0)
      throw new Error(`wake claim lapsed during its hand-over (${lost.join(", ")}): it may wake twice`);
  };
  const schedule = () => {
    timer = clock.setTimer(() => {
      timer = undefined;
      renewing = renewAll()
        .catch(report)
        .finally(() => {
          if (!stopped) schedule();
        });
    }, WAKE_CLAIM_RENEW_MS);
  };
  schedule();
  return {
    async stop() {
      stopped = true;
      if (timer !== undefined) clock.clearTimer(timer);
      await renewing;
    },
  };
}
