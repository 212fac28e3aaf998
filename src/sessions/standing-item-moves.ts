/**
 * StandingItemMoves: finishes moving a thread's standing items (scheduled tasks, wake-ups,
 * subscriptions, read positions: the modules' `move`) from the session "new" replaced to the new
 * one. The new session's record names the old one (`itemsFrom`), written in the same step as the
 * switch, so a process that dies between the switch and the move leaves the move to be finished:
 * each time a session with that mark is loaded (`finish`, from the cache's `prepare`), and by
 * "new" itself before it answers. A failed move is tried again a few times; one that keeps failing
 * is told to the thread once, and is tried again at the session's next load. A "new" typed while
 * the move still fails carries the old session's mark on to the new one (itemsFromReplacing), so
 * every session named is moved from, oldest first, each name cleared once its move worked.
 * The modules' moves are safe to repeat, so a move finished twice (two processes, a retry after a
 * partial move) is harmless. The mark is changed only where the session's record may be written
 * (with several processes: by its lease's holder); elsewhere the items are moved all the same and
 * the mark stays. Shutdown stops the retries (stop): a move cut short keeps its mark and is
 * finished at the session's next load, like one that failed.
 */
import type { Logger } from "pino";
import { type Clock, systemClock } from "../core/clock.js";
import type { ThreadTarget } from "../core/thread-target.js";
import type { LiveSession } from "./live-session.js";
import { itemSources, itemsFromOf } from "./session-record.js";

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
  /** The timers the retries wait on (default: the system clock). */
  readonly clock?: Clock;
  readonly logger: Logger;
}

const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [1_000, 10_000];

/** Finishes the moves of standing items to sessions that "new" started. */
export class StandingItemMoves {
  /** The move under way per new session's id (one at a time per session in this process). */
  private readonly running = new Map<string, Promise<void>>();
  /** Aborted by stop: no move starts or is tried again, and a retry's pause ends at once. */
  private readonly stopping = new AbortController();

  constructor(private readonly options: StandingItemMovesOptions) {}

  /**
   * Move the items `live`'s record says are still to come to it, if any; resolves once done or
   * given up for now (never rejects). A move already under way here is joined.
   */
  finish(live: LiveSession): Promise<void> {
    if (!live.record.itemsFrom || this.stopping.signal.aborted) return Promise.resolve();
    const under = this.running.get(live.id);
    if (under) return under;
    const run = this.run(live).finally(() => this.running.delete(live.id));
    this.running.set(live.id, run);
    return run;
  }

  /**
   * Shutdown: start no more moves and try none again (their marks stay for the next load); a
   * move under way ends on its own.
   */
  stop(): void {
    this.stopping.abort();
  }

  private async run(live: LiveSession): Promise<void> {
    const from = live.record.itemsFrom;
    if (!from) return;
    const { logger } = this.options;
    const sources = itemSources(from);
    const failed = await this.tryMoves(sources, live.id);
    for (const [oldId, error] of failed)
      logger.warn(
        { err: error, oldId, newId: live.id },
        "moving a thread's standing items to its new session failed",
      );
    // Cut short by shutdown: not a move that keeps failing, so nobody is told yet.
    const tell = failed.size > 0 && !from.told && !this.stopping.signal.aborted;
    // Nothing to write: not this process's record, or no move worked and nobody is to be told.
    if (!(this.options.mayWrite?.(live.id) ?? true) || (failed.size === sources.length && !tell)) return;
    // Marked first: a thread is told at most once, even when marking and telling race a restart.
    if (!(await this.mark(live, failed, tell)) || !tell) return;
    await this.options
      .tell(live.record.target, MOVE_FAILED_TEXT)
      .catch((err: unknown) =>
        logger.warn({ err, newId: live.id }, "telling a thread its items did not move failed"),
      );
  }

  /**
   * Move the items of each of `oldIds` (oldest first) to `newId`, trying those that failed again
   * after each of the retry delays; the moves that failed every time, with their last error.
   */
  private async tryMoves(oldIds: readonly string[], newId: string): Promise<Map<string, unknown>> {
    const delays = this.options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
    let failed = new Map<string, unknown>();
    let pending = oldIds;
    const { signal } = this.stopping;
    for (let attempt = 0; attempt <= delays.length && pending.length > 0; attempt += 1) {
      if (attempt > 0) {
        await this.pause(delays[attempt - 1] ?? 0);
        if (signal.aborted) break;
      }
      failed = new Map();
      for (const oldId of pending) {
        try {
          await this.options.move(oldId, newId);
        } catch (error) {
          failed.set(oldId, error ?? new Error("the move failed"));
        }
      }
      pending = [...failed.keys()];
    }
    return failed;
  }

  /** Wait `ms` on the clock (a retry's pause), or until stop. */
  private pause(ms: number): Promise<void> {
    const clock = this.options.clock ?? systemClock;
    const { signal } = this.stopping;
    if (signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const stopped = () => {
        clock.clearTimer(timer);
        resolve();
      };
      const timer = clock.setTimer(() => {
        signal.removeEventListener("abort", stopped);
        resolve();
      }, ms);
      signal.addEventListener("abort", stopped, { once: true });
    });
  }

  /**
   * Keep in the record's mark only the sessions in `failed` (cleared when none), marked told with
   * `told`; true once saved. The record is read as it is now: a mark is only ever shortened.
   */
  private async mark(
    live: LiveSession,
    failed: ReadonlyMap<string, unknown>,
    told: boolean,
  ): Promise<boolean> {
    try {
      await live.update((r) => {
        if (!r.itemsFrom) return r;
        const left = itemSources(r.itemsFrom).filter((id) => failed.has(id));
        return { ...r, itemsFrom: itemsFromOf(left, told || r.itemsFrom.told) };
      });
      return true;
    } catch (err) {
      this.options.logger.warn({ err, sessionId: live.id }, "saving a session's standing-item move failed");
      return false;
    }
  }
}
