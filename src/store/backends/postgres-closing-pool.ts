/**
 * ClosingPool: the Postgres store's queries on its `pg` pool, and the pool's closing. `pg`'s
 * `pool.end()` neither answers the calls still waiting for a connection (they sat in its queue
 * until its connect timeout, then failed with "timeout exceeded when trying to connect", or never
 * settled once that unref'd timer could not fire) nor waits for its connections to close (it
 * resolves once each was asked to end, so a server stopped right after still ended them with an
 * error). Here closing fails every waiting call at once with a clear "store closed" error, refuses
 * new ones alike, and resolves once the connections have closed (at most a reply timeout for a
 * stalled link). A call that already has its connection runs to its end.
 */
import type pg from "pg";
import { settlesWithin } from "../../core/settles-within.js";
import { REPLY_TIMEOUT_MS } from "./backend.js";

/** What a call waiting for a connection when the pool closes fails with. */
const CLOSED_WHILE_WAITING = "the store closed while the call waited for a connection";
/** What a call made after the pool closed fails with. */
const CLOSED = "the store is closed";

/** A `pg` pool whose closing settles every call waiting for one of its connections. */
export class ClosingPool {
  private ended = false;
  /** Calls waiting for a connection, each with how to fail it. */
  private readonly waiting = new Set<(error: Error) => void>();
  /** The pool's connections not closed yet, each with its closing: end() waits for them. */
  private readonly connections = new Map<pg.PoolClient, Promise<void>>();

  constructor(readonly pool: pg.Pool) {
    pool.on("connect", (client) => {
      const ended = new Promise<void>((resolve) => client.once("end", resolve));
      this.connections.set(client, ended);
      void ended.then(() => this.connections.delete(client));
    });
  }

  /** Run one statement on a pooled connection (as `pool.query` does), failing when the pool closes first. */
  async query(sql: string, values: readonly unknown[]): Promise<pg.QueryResult> {
    return queryOn(await this.checkOut(), sql, values);
  }

  /** Fail every call waiting for a connection, end the pool, and wait for its connections to close. */
  async end(): Promise<void> {
    this.ended = true;
    const closed = new Error(CLOSED_WHILE_WAITING);
    for (const fail of this.waiting) fail(closed);
    this.waiting.clear();
    await this.pool.end();
    await settlesWithin(Promise.all(this.connections.values()), REPLY_TIMEOUT_MS);
  }

  /** A connection of the pool; a call still waiting for one when the pool ends fails then. */
  private checkOut(): Promise<pg.PoolClient> {
    if (this.ended) return Promise.reject(new Error(CLOSED));
    return new Promise((resolve, reject) => {
      let waiting = true;
      const fail = (error: Error) => {
        waiting = false;
        reject(error);
      };
      this.waiting.add(fail);
      this.pool.connect().then(
        (client) => {
          this.waiting.delete(fail);
          // Failed by end() meanwhile: the connection goes back (the ending pool closes it).
          if (waiting) resolve(client);
          else client.release();
        },
        (error: unknown) => {
          this.waiting.delete(fail);
          if (waiting) reject(error);
        },
      );
    });
  }
}

/**
 * Run `sql` on `client` and hand it back to the pool, as `pool.query` does: a connection that
 * failed (an error event while the statement runs, or a failed statement) is handed back with the
 * error, so the pool closes it rather than reusing it.
 */
function queryOn(client: pg.PoolClient, sql: string, values: readonly unknown[]): Promise<pg.QueryResult> {
  return new Promise((resolve, reject) => {
    let released = false;
    const release = (error?: Error): boolean => {
      if (released) return false;
      released = true;
      client.removeListener("error", onError);
      client.release(error);
      return true;
    };
    const onError = (error: Error) => {
      if (release(error)) reject(error);
    };
    client.once("error", onError);
    try {
      client.query(sql, values as unknown[], (error: Error | undefined, result: pg.QueryResult) => {
        if (!release(error ?? undefined)) return;
        if (error) reject(error);
        else resolve(result);
      });
    } catch (error) {
      if (release(error as Error)) reject(error);
    }
  });
}
