/**
 * The Postgres store's single-process lock: a session-level advisory lock (`pg_try_advisory_lock`
 * on one constant key) held by a connection of its own for the life of the process. The server
 * drops it when that session ends: at shutdown, and when the process dies (its socket closes).
 * A host that vanishes without closing it (power cut, frozen VM, partition) is noticed only by the
 * server's TCP keepalive, which by default waits the OS's 7200 s before its first probe: every
 * later start would be refused for two hours. So the lock session sets its own server-side
 * keepalive (LOCK_SESSION_KEEPALIVE) before it takes the lock: the server ends a vanished holder's
 * session, and with it the lock, within about a minute and a half. Advisory locks are per
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
 * The lock session's server-side TCP settings: the first keepalive probe after 30 s of silence,
 * then one every 10 s, the session ended after 3 unanswered (60 s); tcp_user_timeout (PostgreSQL
 * 12+, where the platform has it) also ends it once sent data has gone unacknowledged for 60 s.
 * All are per session (a plain SET); on a Unix socket the server ignores them.
 */
const LOCK_SESSION_KEEPALIVE = [
  "SET tcp_keepalives_idle = 30",
  "SET tcp_keepalives_interval = 10",
  "SET tcp_keepalives_count = 3",
] as const;
const LOCK_SESSION_USER_TIMEOUT = "SET tcp_user_timeout = 60000";

/** SQLSTATEs of a setting this server does not know (before 12) or cannot apply on its platform. */
const SETTING_UNSUPPORTED = new Set(["42704", "22023"]);

/** This process's side: probe a silent server after 30 s too, so a vanished server is noticed. */
const CLIENT_KEEPALIVE_DELAY_MS = 30_000;

/**
 * Take the lock on the database at `url`: the held lock, or undefined while another session holds
 * it. Throws when the database cannot be reached. `onLost` hears, once, of the connection ending
 * before `release` (the server restarted, the network dropped): this process no longer holds the lock.
 */
export async function tryPostgresLock(
  url: string,
  description: string,
  onLost: ErrorSink,
): Promise<HeldLock | undefined> {
  const client = new pg.Client({
    connectionString: url,
    keepAlive: true,
    keepAliveInitialDelayMillis: CLIENT_KEEPALIVE_DELAY_MS,
    application_name: "coworker single-process lock",
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  });
  let released = false;
  /** Told once: a dropped connection may be both an 'error' and an 'end'. */
  const lose = (error: Error): void => {
    if (released) return;
    released = true;
    onLost(error);
  };
  // An idle client's dropped connection is an 'error' event: unheard, it would end the process.
  client.on("error", (error) => {
    lose(new Error(`its Postgres connection failed: ${error.message}`));
  });
  try {
    await client.connect();
    await limitServerKeepalive(client);
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
    lose(new Error(`its Postgres connection to ${description} closed`));
  });
  return {
    release: async () => {
      if (released) return;
      released = true;
      await client.end();
    },
  };
}

/** Bound how long the server keeps this session after its client's host has vanished. */
async function limitServerKeepalive(client: pg.Client): Promise<void> {
  for (const setting of LOCK_SESSION_KEEPALIVE) await client.query(setting);
  try {
    await client.query(LOCK_SESSION_USER_TIMEOUT);
  } catch (error) {
    // Keepalive alone still bounds an idle session's end; an older server or platform lacks this one.
    if (!SETTING_UNSUPPORTED.has((error as { code?: string }).code ?? "")) throw error;
  }
}
