/**
 * PostgresTable: a keyv store adapter over one `pg` connection pool and one table of
 * `(key, value)` rows — the same table and columns @keyv/postgres used, so existing databases
 * keep their data. The store owns the pool (so several stores in one process stay apart) and
 * listens for its errors: a server restart that drops idle connections is reported, never an
 * uncaught 'error' event that ends the process. Expired rows are purged one window of keys at a
 * time, each window a short statement well inside the pool's timeouts, however large the table.
 */
import { EventEmitter } from "node:events";
import type { KeyvStoreAdapter, StoredData } from "keyv";
import type pg from "pg";
import { type ExpectedEntry, PING_TIMEOUT_MS, SharedAdapterClearError } from "./backend.js";
import { ClosingPool } from "./postgres-closing-pool.js";

/**
 * A failed call on the table: names the store by its credential-free description and keeps the
 * driver's error (its SQLSTATE `code` included) as the cause.
 */
export class PostgresCallError extends Error {
  override readonly name = "PostgresCallError";

  constructor(
    store: string,
    readonly reason: string,
    options: ErrorOptions,
  ) {
    super(`Postgres store at ${store}: ${reason}`, options);
  }
}

/**
 * Rows (in key order) one purge statement looks at: about 0.25 s at 4 KB a row (the whole table
 * in one statement took 13-16 s at 300,000 such rows, past the pool's 5 s reply timeout).
 */
const PURGE_WINDOW_ROWS = 5_000;

/** How long the health ping waits for the table's write lock: half the ping's own bound. */
const PING_LOCK_TIMEOUT_MS = PING_TIMEOUT_MS / 2;

/** A purge under way: `rest` settles once every window is done or the table is closed. */
export interface PurgeRun {
  readonly rest: Promise<void>;
}

/** One `(key, value)` table over a pool; values are keyv's serialised envelopes. */
export class PostgresTable extends EventEmitter implements KeyvStoreAdapter {
  readonly opts: Record<string, unknown> = {};
  namespace?: string | undefined;
  private closed = false;
  private purging: Promise<void> | undefined;
  /** The pool's queries, and its closing (see ClosingPool). */
  private readonly calls: ClosingPool;

  /**
   * `table` is a trusted, already-quoted identifier such as `public.keyv`; `store` describes the
   * server in errors and must hold no credentials.
   */
  constructor(
    private readonly pool: pg.Pool,
    private readonly table: string,
    private readonly store: string,
    private readonly purgeWindowRows = PURGE_WINDOW_ROWS,
  ) {
    super();
    pool.on("error", (error) => this.emit("error", error));
    this.calls = new ClosingPool(pool);
  }

  /** Create the table when it does not exist yet. */
  async ensureTable(): Promise<void> {
    await this.query(`CREATE TABLE IF NOT EXISTS ${this.table} (key VARCHAR(255) PRIMARY KEY, value TEXT)`);
  }

  /** One query; rows as objects. Fails with a PostgresCallError. */
  async query(sql: string, values: readonly unknown[] = []): Promise<Array<Record<string, unknown>>> {
    try {
      return (await this.calls.query(sql, values)).rows;
    } catch (error) {
      throw new PostgresCallError(this.store, this.reasonOf(error), { cause: error });
    }
  }

  /**
   * A round trip that takes the lock every write takes on the table, writing nothing: a table gone,
   * locked by another client against writes (`LOCK TABLE … IN EXCLUSIVE MODE`, a CREATE INDEX) or
   * against everything, or a server that refuses writes (a read-only replica) fails it with the
   * server's reason. A read would pass under a lock that stalls every write. Its own lock timeout,
   * shorter than the health ping's, so the reason arrives before the ping gives up on it.
   */
  async ping(): Promise<void> {
    await this.query(
      `SET LOCAL lock_timeout = ${PING_LOCK_TIMEOUT_MS}; DELETE FROM ${this.table} WHERE false`,
    );
  }

  async get<Value>(key: string): Promise<StoredData<Value> | undefined> {
    const rows = await this.query(`SELECT value FROM ${this.table} WHERE key = $1`, [key]);
    return rows[0]?.value as StoredData<Value> | undefined;
  }

  /**
   * The stored values of `keys`, in order (undefined where absent), in one query. Without it keyv
   * read key by key and answered undefined for a read that failed, as if the key were absent.
   */
  async getMany<Value>(keys: string[]): Promise<Array<StoredData<Value> | undefined>> {
    const rows = await this.query(`SELECT key, value FROM ${this.table} WHERE key = ANY($1::text[])`, [keys]);
    const values = new Map(rows.map((row) => [row.key, row.value as StoredData<Value>]));
    return keys.map((key) => values.get(key));
  }

  async set(key: string, value: string): Promise<void> {
    await this.setMany([{ key, value }]);
  }

  /**
   * Every entry in one statement: committed together or not at all. A key given twice keeps its
   * last value, as on the other backends (one upsert cannot touch a row twice: Postgres refused
   * the whole write).
   */
  async setMany(entries: ReadonlyArray<{ key: string; value: string }>): Promise<void> {
    if (entries.length === 0) return;
    const last = new Map(entries.map((entry) => [entry.key, entry.value] as const));
    await this.query(
      `INSERT INTO ${this.table} (key, value) SELECT * FROM unnest($1::text[], $2::text[])
       ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
      [[...last.keys()], [...last.values()]],
    );
  }

  async delete(key: string): Promise<boolean> {
    const rows = await this.query(`DELETE FROM ${this.table} WHERE key = $1 RETURNING key`, [key]);
    return rows.length > 0;
  }

  /**
   * Refused (keyv's `clear`): every namespace shares this table and its one `namespace` field
   * (keyv sets it per instance, the last one wins), so it cannot know whose rows to delete.
   */
  async clear(): Promise<void> {
    throw new SharedAdapterClearError();
  }

  /**
   * Write `value` unless a live row holds `key` (an expired envelope counts as absent), in one
   * conditional upsert; true when this call wrote it. Atomic across connections and processes.
   */
  async insertIfAbsent(key: string, value: string, now: number): Promise<boolean> {
    const rows = await this.query(
      `INSERT INTO ${this.table} AS existing (key, value) VALUES ($1, $2)
       ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value
       WHERE ${expiresOf("existing.value")} < $3
       RETURNING key`,
      [key, value, now],
    );
    return rows.length === 1;
  }

  /**
   * Write `value` only while the row of `key` holds the entry `expected` describes, unexpired at
   * its `now` (see ExpectedEntry), in one conditional update; true when written.
   */
  async replaceIf(key: string, expected: ExpectedEntry, value: string): Promise<boolean> {
    const rows = await this.query(
      `UPDATE ${this.table} SET value = $5 WHERE ${HOLDS_EXPECTED} RETURNING key`,
      [key, expected.exact, expected.expiringStart, expected.now, value],
    );
    return rows.length === 1;
  }

  /**
   * Delete the row of `key` only while it holds the entry `expected` describes, unexpired at its
   * `now` (see ExpectedEntry), in one conditional delete; true when deleted.
   */
  async deleteIf(key: string, expected: ExpectedEntry): Promise<boolean> {
    const rows = await this.query(`DELETE FROM ${this.table} WHERE ${HOLDS_EXPECTED} RETURNING key`, [
      key,
      expected.exact,
      expected.expiringStart,
      expected.now,
    ]);
    return rows.length === 1;
  }

  /**
   * Start deleting every row whose envelope has expired by `now`, walking the table in key order
   * one window of rows at a time. Resolves once the first window is done, so a table that cannot
   * be written (locked, gone) fails the caller; the other windows follow in `rest`, which stops
   * when the table is closed. While a purge runs, another start joins it.
   */
  async startPurge(now: number): Promise<PurgeRun> {
    if (this.purging) return { rest: this.purging };
    const first = this.purgeWindow(undefined, now);
    // The first window's failure is the caller's (awaited below); `rest` then just ends.
    const rest = first
      .then(
        async (end) => {
          for (let after = end; after !== undefined && !this.closed; )
            after = await this.purgeWindow(after, now);
        },
        () => undefined,
      )
      .finally(() => {
        this.purging = undefined;
      });
    this.purging = rest;
    await first;
    return { rest };
  }

  /**
   * Delete the expired rows among the next window of keys after `after` (from the first key when
   * undefined); the window's last key, or undefined when it reached the end of the table. Two
   * statements, so the delete is planned with its bounds known: an index range, never a scan of
   * the table with the expiry regex applied to every row.
   */
  private async purgeWindow(after: string | undefined, now: number): Promise<string | undefined> {
    const from = after === undefined ? "" : "WHERE key > $2";
    const [window] = await this.query(
      `SELECT count(*)::int AS window_rows, max(key) AS window_end
       FROM (SELECT key FROM ${this.table} ${from} ORDER BY key LIMIT $1) AS window_keys`,
      after === undefined ? [this.purgeWindowRows] : [this.purgeWindowRows, after],
    );
    const { window_rows: rows, window_end: last } = window as {
      window_rows: number;
      window_end: string | null;
    };
    if (last === null) return undefined;
    await this.query(
      `DELETE FROM ${this.table} WHERE ${after === undefined ? "" : "key > $3 AND "}key <= $2
       AND ${expiresOf("value")} < $1`,
      after === undefined ? [now, last] : [now, last, after],
    );
    return rows < this.purgeWindowRows ? undefined : last;
  }

  /**
   * Close the pool once a purge under way has stopped after its window in flight: every call still
   * waiting for a connection then fails with "the store closed…", and it resolves once the
   * connections have closed (see ClosingPool).
   */
  async disconnect(): Promise<void> {
    this.closed = true;
    await this.purging?.catch(() => undefined);
    await this.calls.end();
  }

  /** The driver's message; its bare "Query read timeout" says what ran out. */
  private reasonOf(error: unknown): string {
    const message = error instanceof Error ? error.message : String(error);
    return message === "Query read timeout"
      ? `no reply within ${this.pool.options.query_timeout} ms (a stalled link or an overloaded server)`
      : message;
  }
}

/**
 * The row of key $1 holds the entry $2 without an expiry, or with one ($3, when not empty, then the
 * expiry and `}`) not passed at $4 (see ExpectedEntry).
 */
const HOLDS_EXPECTED = `key = $1 AND (value = $2 OR
  (char_length($3::text) > 0 AND left(value, char_length($3::text)) = $3::text
    AND ${expiresOf("value")} >= $4))`;

/**
 * The expiry time (ms since the epoch) of a stored keyv envelope, NULL when it has none. Read off
 * the end of the text (JSON.stringify writes `{"value":…,"expires":N}`, and a complete value cannot
 * end in `"expires":N`) rather than by casting to jsonb: one row that is not JSON (hand-edited,
 * another program's in this shared table) failed that cast for the whole statement, so the
 * store would not open and expired rows were never purged again.
 */
function expiresOf(column: string): string {
  return `substring(${column} from '"expires":(-?\\d+(?:\\.\\d+)?)\\}$')::numeric`;
}
