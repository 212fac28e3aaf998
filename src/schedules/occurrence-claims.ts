/**
 * Occurrence claims: each due time of a task runs exactly once. Before a process runs (or skips)
 * an occurrence it claims it in the store with a write-if-absent (Redis SET NX, SQLite's
 * conditional insert): the one process whose write lands runs it, every other process — or the
 * same process after a restart — sees the claim and leaves it. A claim outlives the catch-up
 * window, past which nobody would run that occurrence anyway. The claimer gives its claim back
 * when the session layer refused to take the run (nothing started), so the occurrence can be
 * claimed again by its retry, another process or the next start — still by one of them only.
 */
import type { KeyValueSpace } from "../store/store.js";

/** Extra time a claim is kept beyond the catch-up window. */
const CLAIM_MARGIN_MS = 86_400_000;

/** Store key of a task occurrence's claim. */
export const claimKey = (taskId: string, dueMs: number) => `claim:${taskId}:${dueMs}`;

/** Claims occurrences in one space for one process. */
export class OccurrenceClaims {
  /**
   * @param owner Names this process in the claim record (for people reading the store).
   * @param catchUpMs The catch-up window: claims are kept this long plus a day.
   */
  constructor(
    private readonly space: KeyValueSpace,
    private readonly owner: string,
    private readonly catchUpMs: number,
  ) {}

  /** True when this call claimed the occurrence (run it); false when someone already had. */
  claim(taskId: string, dueMs: number, nowMs: number): Promise<boolean> {
    return this.space.setIfAbsent(
      claimKey(taskId, dueMs),
      { by: this.owner, at: new Date(nowMs).toISOString() },
      this.catchUpMs + CLAIM_MARGIN_MS,
    );
  }

  /** Give back this process's claim of an occurrence whose run could not be handed over. */
  async release(taskId: string, dueMs: number): Promise<void> {
    await this.space.delete(claimKey(taskId, dueMs));
  }
}
