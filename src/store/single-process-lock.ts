/**
 * The single-process guard: on SQLite and Postgres, coordination (session leases, fenced writes)
 * lives in one process's memory, so two processes on one store would both hold the same session's
 * lease and both write its turns. `coworker start` takes this lock before it opens such a store and
 * refuses to start while another live process holds it. A lock the operating system or the database
 * server drops when its holder dies (backends/sqlite-lock-file.ts, backends/postgres-advisory-lock.ts)
 * leaves nothing stale after a crash. A busy lock is tried again for a few seconds first, so a
 * restart whose old process is still shutting down goes through. Redis coordinates processes, and
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
  /** The lock was lost while held (Postgres: its connection ended). */
  readonly onLost?: ErrorSink;
}

/**
 * Take the store's single-process lock: undefined for a store that needs none (Redis, memory),
 * else the held lock. Rejects with a ServiceFailure when another live process still holds it after
 * the wait, and with the underlying error when the store cannot be reached.
 */
export async function takeSingleProcessLock(
  options: SingleProcessLockOptions,
): Promise<HeldLock | undefined> {
  const target = resolveStoreTarget(options.url, options.dataDir);
  let attempt: () => Promise<HeldLock | undefined>;
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
      const onLost = options.onLost ?? (() => undefined);
      attempt = () => tryPostgresLock(target.url, description, onLost);
      what = `the Postgres database ${description}`;
      break;
    }
  }
  const waitMs = options.waitMs ?? LOCK_WAIT_MS;
  const giveUpAt = Date.now() + waitMs;
  for (let tries = 0; ; tries++) {
    const held = await attempt();
    if (held) return held;
    if (Date.now() >= giveUpAt) throw storeInUse(what);
    if (tries === 0)
      options.onWait?.(
        `another Coworker process is using ${what}; waiting up to ${Math.ceil(waitMs / 1_000)} s for it to stop`,
      );
    await new Promise((resolve) =>
      setTimeout(resolve, Math.min(RETRY_MS, Math.max(0, giveUpAt - Date.now()))),
    );
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
