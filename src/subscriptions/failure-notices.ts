/**
 * FailureNotices: whether a subscriber was told that their subscription's wake-ups keep failing
 * (wake-failures.ts decides when a try should tell), kept in the store's "dedupe" space: each
 * process that holds a batch of the subscription runs its own retries, and with a marker they all
 * share, only the first to get there tells — once per run of failures across processes and
 * restarts. A wake-up that goes ends the run (the marker is deleted); a notice that could not be
 * posted gives the marker back, so the next failing try tells. A marker lapses after a week, so
 * a subscription still failing then is told again.
 */
import type { KeyValueSpace } from "../store/store.js";

/** How long a notice counts as given while the failures go on. */
const TOLD_KEPT_MS = 7 * 24 * 3_600_000;

const toldKey = (subscriptionId: string) => `wake-failing-told:${subscriptionId}`;

/** The shared "subscriber was told" markers (see the module comment). */
export class FailureNotices {
  constructor(private readonly space: KeyValueSpace) {}

  /** Take the telling of this run: false when another process (or an earlier try) told already. */
  claim(subscriptionId: string): Promise<boolean> {
    return this.space.setIfAbsent(toldKey(subscriptionId), new Date().toISOString(), TOLD_KEPT_MS);
  }

  /** The run ended (a wake-up went), or its notice could not be posted: the next failing run tells. */
  async release(subscriptionId: string): Promise<void> {
    await this.space.delete(toldKey(subscriptionId));
  }
}
