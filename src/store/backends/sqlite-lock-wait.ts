/**
 * SqliteLockWait: how the SQLite adapter (sqlite-adapter.ts) waits out another connection's write
 * lock (a second process, a sqlite3 shell, `coworker doctor`) without stalling the event loop.
 * SQLite waits for a lock inside the statement, on the main thread, so the connection waits only
 * LOCK_WAIT_ON_THREAD_MS. A batch that finds the file locked stays queued, whole, and is tried
 * again after a growing pause (the loop serves timers, sockets and other conversations meanwhile;
 * writes issued during the pause join it, and a read of a key with a write queued waits for that
 * batch to settle); once the lock has been held for `busyTimeoutMs` (or for CLOSING_LOCK_WAIT_MS of
 * a close, within shutdown's budget), every queued write fails with an error naming the file.
 * Opening the file waits out a lock alike (waitOutLock): a connection holding the whole file (a
 * sqlite3 shell in exclusive locking mode) made it wait on the main thread for the whole timeout.
 * Reads are not retried: once open, the connection holds a shared lock on the file for its life
 * (WAL mode), so no other connection can take the whole file, and a reader never waits for a
 * writer; only WAL recovery, which runs while no connection has the file open, locks out readers.
 * The pauses and deadlines run on a Clock (by default the real one, with timers that hold the
 * process open: a queued write is tried again, or fails with its error, before the process ends).
 */
import { backoffMs } from "../../core/backoff.js";
import type { Clock, TimerHandle } from "../../core/clock.js";

/**
 * How long a statement waits for another connection's lock: SQLite waits on the main thread, so
 * only this long (a commit elsewhere takes about a millisecond); longer locks are waited out
 * between loop turns (see the header).
 */
export const LOCK_WAIT_ON_THREAD_MS = 50;
/** The first pause before a locked batch is tried again; each pause doubles (backoffMs), up to the next. */
const LOCK_RETRY_FIRST_MS = 10;
const LOCK_RETRY_MAX_MS = 250;
/**
 * Once the store is closing, a batch waits at most this long for another connection's lock:
 * shutdown gives all its closers 5 s together (ops/shutdown.ts), and writes failed with an error
 * are reported, where writes cut off by its watchdog would be lost without a word.
 */
const CLOSING_LOCK_WAIT_MS = 3_000;

/**
 * The real clock, with timers that hold the process open (systemClock's do not): see the header.
 */
const HELD_CLOCK: Clock = Object.freeze({
  now: () => Date.now(),
  setTimer: (callback: () => void, ms: number): TimerHandle => setTimeout(callback, ms),
  clearTimer: (handle: TimerHandle): void => clearTimeout(handle as NodeJS.Timeout),
});

/** A batch waiting for another connection's write lock: since when, its retries so far, and who waits. */
interface LockWait {
  readonly since: number;
  retries: number;
  timer: TimerHandle | undefined;
  readonly settled: Promise<void>;
  readonly settle: () => void;
}

/** What the wait needs: the file (for the error), the deadline, and how to try the batch again. */
export interface SqliteLockWaitOptions {
  readonly file: string;
  readonly busyTimeoutMs: number;
  /** Try the queued batch again (after a pause). */
  readonly retry: () => void;
  /** The time and timers of the wait (default: the real clock, holding the process open). */
  readonly clock?: Clock;
}

/** The queued batch's wait for another connection's write lock, if it is waiting. */
export class SqliteLockWait {
  private wait: LockWait | undefined;
  private readonly clock: Clock;

  constructor(private readonly options: SqliteLockWaitOptions) {
    this.clock = options.clock ?? HELD_CLOCK;
  }

  /** Whether the queued batch waits for the lock (its retry timer will commit it). */
  get waiting(): boolean {
    return this.wait !== undefined;
  }

  /** While waiting, the promise of the batch's settling (committed, or failed at the deadline). */
  get settled(): Promise<void> | undefined {
    return this.wait?.settled;
  }

  /**
   * The queued batch found the file locked: try it again after the next pause, unless the lock
   * has been held for `busyTimeoutMs` already, or for CLOSING_LOCK_WAIT_MS of a close that began
   * at `closingAt` (false: the batch is to fail).
   */
  retryLater(closingAt: number | undefined): boolean {
    let wait = this.wait;
    if (!wait) {
      let settle!: () => void;
      const settled = new Promise<void>((resolve) => {
        settle = resolve;
      });
      wait = { since: this.clock.now(), retries: 0, timer: undefined, settled, settle };
      this.wait = wait;
    }
    const now = this.clock.now();
    const closingFor = closingAt === undefined ? 0 : now - closingAt;
    if (now - wait.since >= this.options.busyTimeoutMs || closingFor >= CLOSING_LOCK_WAIT_MS) return false;
    const delayMs = backoffMs(wait.retries, LOCK_RETRY_FIRST_MS, LOCK_RETRY_MAX_MS);
    wait.retries += 1;
    wait.timer = this.clock.setTimer(() => this.options.retry(), delayMs);
    return true;
  }

  /** End any wait (its batch is being settled) and let those waiting for it go on. */
  end(): void {
    const wait = this.wait;
    if (!wait) return;
    this.wait = undefined;
    if (wait.timer !== undefined) this.clock.clearTimer(wait.timer);
    wait.settle();
  }

  /** The error a queued write fails with when the lock outlasted the wait (`closing`: a close cut it). */
  lockedError(cause: unknown, closing: boolean): Error {
    const held = closing ? "until the store closed" : `for ${this.options.busyTimeoutMs} ms`;
    return lockedError(this.options.file, held, "the write was not made", cause);
  }
}

/**
 * Run `attempt` (its statements wait for a lock LOCK_WAIT_ON_THREAD_MS at most) until it does not
 * find `file` locked by another connection, pausing between tries as a locked batch does (the loop
 * runs meanwhile); once the lock has been held for `busyTimeoutMs`, fail with an error naming the
 * file. Any other error fails at once. The pauses run on `clock`.
 */
export async function waitOutLock<T>(
  file: string,
  busyTimeoutMs: number,
  attempt: () => T,
  clock: Clock = HELD_CLOCK,
): Promise<T> {
  const since = clock.now();
  for (let retries = 0; ; retries++) {
    try {
      return attempt();
    } catch (error) {
      if (!isLocked(error)) throw error;
      if (clock.now() - since >= busyTimeoutMs)
        throw lockedError(file, `for ${busyTimeoutMs} ms`, "it could not be opened", error);
    }
    const delayMs = backoffMs(retries, LOCK_RETRY_FIRST_MS, LOCK_RETRY_MAX_MS);
    await new Promise<void>((resolve) => clock.setTimer(resolve, delayMs));
  }
}

/** The error of a lock on `file` held past a wait: for how long (`held`), and what did not happen. */
function lockedError(file: string, held: string, outcome: string, cause: unknown): Error {
  return new Error(
    `store: the SQLite file ${file} stayed locked by another connection (a second Coworker process, ` +
      `a sqlite3 shell, coworker doctor) ${held}; ${outcome}`,
    { cause },
  );
}

/** Whether `error` is SQLite's "another connection holds the lock" (SQLITE_BUSY and its kinds). */
export function isLocked(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && isLockedCode(code);
}

/** Whether `code` is SQLITE_BUSY or one of its kinds (SQLITE_BUSY_RECOVERY, …). */
export function isLockedCode(code: string): boolean {
  return code === "SQLITE_BUSY" || code.startsWith("SQLITE_BUSY_");
}
