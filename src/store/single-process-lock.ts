/**
 * The single-process guard: on SQLite and Postgres, coordination (session leases, fenced writes)
 * lives in one process's memory, so two processes on one store would both hold the same session's
 * lease and both write its turns. `coworker start` takes this lock before it opens such a store and
 * refuses to start while another live process holds it. A lock the operating system or the database
 * server drops when its holder dies (backends/sqlite-lock-file.ts, backends/postgres-advisory-lock.ts)
 * leaves nothing stale after a crash. A busy lock is tried again for a few seconds first, so a
 * restart whose old process is still shutting down goes through. A lock lost while held (Postgres:
 * the server restarted, or ended the lock's session) is taken again the same way, an unreachable
 * server tried again too for that wait; when it cannot be (another process took it first, or the
 * server is still down), `onLost` says so and the process must stop: never two beside each other,
 * and a supervisor restarting it takes the lock afresh. Redis coordinates processes, and
 * memory: is one process's by nature, so neither takes a lock. Only `start` takes it: `doctor`
 * opens the store beside a running service.
 */
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { ServiceFailure } from "../core/failure.js";
import type { ErrorSink } from "./backends/backend.js";
import { describeStoreTarget, resolveStoreTarget } from "./store-url.js";

/** A held lock; `release` gives it up (at shutdown). */
export interface HeldLock {
  release(): Promise<void>;
}

/** How long a busy lock is tried again before start-up is refused, by default. */
export const LOCK_WAIT_MS = 5_000;

/** How often a busy lock is tried again. */
const RETRY_MS = 250;

export interface SingleProcessLockOptions {
  /** COWORKER_STORE_URL (unset → SQLite in `dataDir`). */
  readonly url?: string | undefined;
  readonly dataDir: string;
  /** How long to keep trying a busy lock; default LOCK_WAIT_MS. */
  readonly waitMs?: number;
  /** Told once, with a line to log, when the lock is busy and the wait begins. */
  readonly onWait?: (line: string) => void;
  /** Told with a line to log when the held lock was lost and has been taken again. */
  readonly onRetaken?: (line: string) => void;
  /** Told once, with the line saying why, when the held lock was lost and could not be taken again. */
  readonly onLost?: (error: Error) => void;
}

/** One try at the lock: the held lock, or undefined while another holds it; `onLost` hears of its loss. */
type Attempt = (onLost: ErrorSink) => Promise<HeldLock | undefined>;

/**
 * Take the store's single-process lock: undefined for a store that needs none (Redis, memory),
 * else the held lock. Rejects with a ServiceFailure when another live process still holds it after
 * the wait, and with the underlying error when the store cannot be reached.
 */
export async function takeSingleProcessLock(
  options: SingleProcessLockOptions,
): Promise<HeldLock | undefined> {
  const target = resolveStoreTarget(options.url, options.dataDir);
  let attempt: Attempt;
  let what: string;
  switch (target.kind) {
    case "redis":
    case "memory":
      return undefined;
    case "sqlite": {
      const folder = path.dirname(target.file);
      await mkdir(folder, { recursive: true, mode: 0o700 });
      const { SQLITE_LOCK_FILE_NAME, trySqliteLock } = await import("./backends/sqlite-lock-file.js");
      const file = path.join(folder, SQLITE_LOCK_FILE_NAME);
      attempt = async () => trySqliteLock(file);
      what = `the data folder ${folder}`;
      break;
    }
    case "postgres": {
      const description = describeStoreTarget(target);
      const { tryPostgresLock } = await import("./backends/postgres-advisory-lock.js");
      attempt = (onLost) => tryPostgresLock(target.url, description, onLost);
      what = `the Postgres database ${description}`;
      break;
    }
  }
  const lock = new KeptLock(attempt, what, options);
  await lock.take();
  return lock;
}

/** The held lock, taken again when it is lost while held. */
class KeptLock implements HeldLock {
  private current: HeldLock | undefined;
  private released = false;

  constructor(
    private readonly attempt: Attempt,
    private readonly what: string,
    private readonly options: SingleProcessLockOptions,
  ) {}

  async take(): Promise<void> {
    this.current = await this.waitFor(false);
  }

  /** Gives up the lock; one being taken again meanwhile is given up as soon as it is taken. */
  async release(): Promise<void> {
    this.released = true;
    await this.current?.release();
    this.current = undefined;
  }

  private readonly lost = (error: unknown): void => {
    if (this.released) return;
    this.current = undefined;
    const reason = error instanceof Error ? error.message : String(error);
    void this.retake(reason);
  };

  private async retake(reason: string): Promise<void> {
    let held: HeldLock;
    try {
      held = await this.waitFor(true);
    } catch (error) {
      const why = error instanceof ServiceFailure ? error.reason : (error as Error).message;
      if (!this.released)
        this.options.onLost?.(
          new Error(`the single-process lock was lost (${reason}) and could not be taken again: ${why}`),
        );
      return;
    }
    // Shutdown began meanwhile: give it up (a failure there would be unheard; the process is ending anyway).
    if (this.released) return held.release().catch(() => undefined);
    this.current = held;
    this.options.onRetaken?.(`the single-process lock was lost (${reason}) and has been taken again`);
  }

  /** Try until the lock is taken or the wait is over; `again`: a lost lock, an unreachable store tried again too. */
  private async waitFor(again: boolean): Promise<HeldLock> {
    const waitMs = this.options.waitMs ?? LOCK_WAIT_MS;
    const giveUpAt = Date.now() + waitMs;
    for (let tries = 0; ; tries++) {
      const held = await this.attempt(this.lost).catch((error: unknown) => {
        if (!again || Date.now() >= giveUpAt) throw error;
        return undefined;
      });
      if (held) return held;
      if (Date.now() >= giveUpAt) throw storeInUse(this.what);
      if (tries === 0 && !again)
        this.options.onWait?.(
          `another Coworker process is using ${this.what}; waiting up to ${Math.ceil(waitMs / 1_000)} s for it to stop`,
        );
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(RETRY_MS, Math.max(0, giveUpAt - Date.now()))),
      );
    }
  }
}

function storeInUse(what: string): ServiceFailure {
  return new ServiceFailure(
    "the store",
    "misconfigured",
    `another Coworker process is using ${what}`,
    "run one process per store, or use Redis (COWORKER_STORE_URL=redis://…) to run several",
  );
}
