/**
 * The Postgres store's `pg` pool, every call on it bounded in time: client-side reply and connect
 * timeouts, and server-side statement, lock and idle-transaction timeouts set with SET on each new
 * connection (never as startup parameters, which PgBouncer refuses), so a stalled link, a lock
 * held by another client or an exhausted pool fails calls rather than hanging them.
 */
import pg from "pg";
import { REPLY_TIMEOUT_MS } from "./backend.js";

/** Opening a connection, or waiting for a free one in the pool: a server that does not answer fails calls instead of queueing them. */
const CONNECT_TIMEOUT_MS = 5_000;
/** Server side: a statement still running after this is cancelled, so one the client gave up on stops holding its locks. */
const STATEMENT_TIMEOUT_MS = 10_000;
/** Waiting for a lock another client holds (a migration, a DBA's transaction): the call fails rather than hanging, and the health ping reads false. */
const LOCK_TIMEOUT_MS = 2_000;
/** Server side: a session left idle inside a transaction is ended, releasing its locks (the store opens none; a backstop). */
const IDLE_IN_TRANSACTION_TIMEOUT_MS = 10_000;

/**
 * The server-side timeouts, set on each new connection before the pool hands it out. Not as the
 * pool's `statement_timeout` (etc.) options: `pg` sends those as startup parameters, which
 * PgBouncer refuses ("unsupported startup parameter"), failing every connection through it.
 */
const SESSION_TIMEOUTS = [
  `SET statement_timeout = ${STATEMENT_TIMEOUT_MS}`,
  `SET lock_timeout = ${LOCK_TIMEOUT_MS}`,
  `SET idle_in_transaction_session_timeout = ${IDLE_IN_TRANSACTION_TIMEOUT_MS}`,
].join("; ");

/** A pool whose every call is bounded: client-side reply and connect timeouts, server-side statement and lock timeouts. */
export function boundedPool(url: string): pg.Pool {
  return new pg.Pool({
    connectionString: url,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    // As long as the Redis backend waits: a stalled link fails a call alike on both.
    query_timeout: REPLY_TIMEOUT_MS,
    // Awaited by the pool before the connection serves a call; a failure fails that call.
    onConnect: async (client) => {
      await client.query(SESSION_TIMEOUTS);
    },
    // TCP keepalive: an idle connection to a host that vanished is noticed and dropped.
    keepAlive: true,
  });
}
