/**
 * The Postgres store's single-process lock: a session-level advisory lock (`pg_try_advisory_lock`
 * on one constant key) held by a connection of its own for the life of the process. The server
 * drops it when that session ends: at shutdown, and when the process dies (its socket closes; a
 * host that vanishes without closing it is noticed by TCP keepalive). Advisory locks are per
 * database, so two deployments on two databases of one server do not meet.
 *
 * It needs a real session: through a pooler in transaction mode (PgBouncer) the lock would sit on
 * a pooled server connection, not this process's.
 */
import pg from "pg";
import type { ErrorSink } from "./backend.js";
import type { HeldLock } from "../single-process-lock.js";

/** The advisory lock key every Coworker process takes on its database ("Coworker" in ASCII). */
export const POSTGRES_LOCK_KEY = "4859211145342608754";

/** How long connecting may take before the attempt fails. */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Take the lock on the database at `url`: the held lock, or undefined while another session holds
 * it. Throws when the database cannot be reached. `onLost` hears of the connection ending before
 * `release` (the server restarted, the network dropped): this process no longer holds the lock.
 */
export async function tryPostgresLock(
  url: string,
  description: string,
  onLost: ErrorSink,
): Promise<HeldLock | undefined> {
  const client = new pg.Client({
    connectionString: url,
    keepAlive: true,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  });
  let released = false;
  // An idle client's dropped connection is an 'error' event: unheard, it would end the process.
  client.on("error", (error) => {
    if (!released)
      onLost(new Error(`the Postgres connection holding the single-process lock failed: ${error.message}`));
  });
  try {
    await client.connect();
    const { rows } = await client.query<{ locked: boolean }>(
      "SELECT pg_try_advisory_lock($1::bigint) AS locked",
      [POSTGRES_LOCK_KEY],
    );
    if (rows[0]?.locked !== true) {
      released = true;
      await client.end();
      return undefined;
    }
  } catch (error) {
    released = true;
    await client.end().catch(() => undefined);
    throw new Error(`cannot reach the Postgres store at ${description}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  client.on("end", () => {
    if (!released)
      onLost(
        new Error(
          `the Postgres connection holding the single-process lock on ${description} closed: another process may now start on this database; restart this one`,
        ),
      );
  });
  return {
    release: async () => {
      if (released) return;
      released = true;
      await client.end();
    },
  };
}
