/**
 * StandingItemMoves: finishes moving a thread's standing items (scheduled tasks, wake-ups,
 * subscriptions, read positions: the modules' `move`) from the session "new" replaced to the new
 * one. The new session's record names the old one (`itemsFrom`), written in the same step as the
 * switch, so a process that dies between the switch and the move leaves the move to be finished:
 * each time a session with that mark is loaded (`finish`, from the cache's `prepare`), and by
 * "new" itself before it answers. A failed move is tried again a few times; one that keeps failing
 * is told to the thread once, and is tried again at the session's next load. The modules' moves are
 * safe to repeat, so a move finished twice (two processes, a retry after a partial move) is harmless.
 * The mark is cleared only where the session's record may be written (with several processes: by
 * its lease's holder); elsewhere the items are moved all the same and the mark stays.
 */
import type { Logger } from "pino";
import type { ThreadTarget } from "../core/thread-target.js";
import type { LiveSession } from "./live-session.js";
import type { ItemsFrom } from "./session-record.js";

/** What the thread is told once the move keeps failing. */
export const MOVE_FAILED_TEXT =
  "I could not move this conversation's scheduled tasks, wake-ups and channel subscriptions to the new session. They still run and wake this conversation, but `status` may not list them. I will try again when the conversation is next used.";

export interface StandingItemMovesOptions {
  /** Move the thread's items from session `oldId` to `newId` (the modules' moves; safe to repeat). */
  readonly move: (oldId: string, newId: string) => Promise<void>;
  /** Post a notice in the thread. */
  readonly tell: (target: ThreadTarget, text: string) => Promise<void>;
  /** Whether this process may write the session's record (default: always, one process). */
  readonly mayWrite?: (sessionId: string) => boolean;
  /** The waits before each retry of a failed move (default 1 s, then 10 s). */
  readonly retryDelaysMs?: readonly number[];
  readonly logger: Logger;
}

const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [1_000, 10_000];

/** Finishes the moves of standing items to sessions that "new" started. */
export class StandingItemMoves {
  /** The move under way per new session's id (one at a time per session in this process). */
  private readonly running = new Map<string, Promise<void>>();

  constructor(private readonly options: StandingItemMovesOptions) {}

  /**
   * Move the items `live`'s record says are still to come to it, if any; resolves once done or
   * given up for now (never rejects). A move already under way here is joined.
   */
  finish(live: LiveSession): Promise<void> {
    if (!live.record.itemsFrom) return Promise.resolve();
    const under = this.running.get(live.id);
    if (under) return under;
    const run = this.run(live).finally(() => this.running.delete(live.id));
    this.running.set(live.id, run);
    return run;
  }

  private async run(live: LiveSession): Promise<void> {
    const from = live.record.itemsFrom;
    if (!from) return;
    const { logger } = this.options;
    const ids = { oldId: from.sessionId, newId: live.id };
    const error = await this.tryMove(from.sessionId, live.id);
    const mayWrite = this.options.mayWrite?.(live.id) ?? true;
    if (error === undefined) {
      if (mayWrite) await this.mark(live, () => undefined);
      return;
    }
    logger.warn({ err: error, ...ids }, "moving a thread's standing items to its new session failed");
    if (from.told || !mayWrite) return;
    // Marked first: a thread is told at most once, even when marking and telling race a restart.
    if (!(await this.mark(live, (f) => ({ ...f, told: true })))) return;
    await this.options
      .tell(live.record.target, MOVE_FAILED_TEXT)
      .catch((err: unknown) =>
        logger.warn({ err, ...ids }, "telling a thread its items did not move failed"),
      );
  }

  /** The move, tried again after each of the retry delays while it fails; its last error, if any. */
  private async tryMove(oldId: string, newId: string): Promise<unknown> {
    const delays = this.options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
    let last: unknown;
    for (let attempt = 0; attempt <= delays.length; attempt += 1) {
      if (attempt > 0) await pause(delays[attempt - 1] ?? 0);
      try {
        await this.options.move(oldId, newId);
        return undefined;
      } catch (error) {
        last = error;
      }
    }
    return last ?? new Error("the move failed");
  }

  /** Change (or clear) the record's mark while it still names the same old session; true once saved. */
  private async mark(
    live: LiveSession,
    change: (from: ItemsFrom) => ItemsFrom | undefined,
  ): Promise<boolean> {
    const sessionId = live.record.itemsFrom?.sessionId;
    try {
      await live.update((r) =>
        r.itemsFrom?.sessionId === sessionId && r.itemsFrom ? { ...r, itemsFrom: change(r.itemsFrom) } : r,
      );
      return true;
    } catch (err) {
      this.options.logger.warn({ err, sessionId: live.id }, "saving a session's standing-item move failed");
      return false;
    }
  }
}

/** Wait `ms` (a retry's pause; never holds the process open). */
function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
