/**
 * PostgresTable: a keyv store adapter over one `pg` connection pool and one table of
 * `(key, value)` rows — the same table and columns @keyv/postgres used, so existing databases
 * keep their data. The store owns the pool (so several stores in one process stay apart) and
 * listens for its errors: a server restart that drops idle connections is reported, never an
 * uncaught 'error' event that ends the process.
 */
import { EventEmitter } from "node:events";
import type { KeyvStoreAdapter, StoredData } from "keyv";
import type pg from "pg";
import { SharedAdapterClearError } from "./backend.js";

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

/** One `(key, value)` table over a pool; values are keyv's serialised envelopes. */
export class PostgresTable extends EventEmitter implements KeyvStoreAdapter {
  readonly opts: Record<string, unknown> = {};
  namespace?: string | undefined;

  /**
   * `table` is a trusted, already-quoted identifier such as `public.keyv`; `store` describes the
   * server in errors and must hold no credentials.
   */
  constructor(
    private readonly pool: pg.Pool,
    private readonly table: string,
    private readonly store: string,
  ) {
    super();
    pool.on("error", (error) => this.emit("error", error));
  }

  /** Create the table when it does not exist yet. */
  async ensureTable(): Promise<void> {
    await this.query(`CREATE TABLE IF NOT EXISTS ${this.table} (key VARCHAR(255) PRIMARY KEY, value TEXT)`);
  }

  /** One query; rows as objects. Fails with a PostgresCallError. */
  async query(sql: string, values: readonly unknown[] = []): Promise<Array<Record<string, unknown>>> {
    try {
      return (await this.pool.query(sql, values as unknown[])).rows;
    } catch (error) {
      throw new PostgresCallError(this.store, this.reasonOf(error), { cause: error });
    }
  }

  /** A round trip that reads the table, so a table locked by another client or gone fails it. */
  async ping(): Promise<void> {
    await this.query(`SELECT 1 FROM ${this.table} LIMIT 1`);
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

  /** Delete every row whose envelope has expired by `now`. */
  async purgeExpired(now: number): Promise<void> {
    await this.query(`DELETE FROM ${this.table} WHERE ${expiresOf("value")} < $1`, [now]);
  }

  async disconnect(): Promise<void> {
    await this.pool.end();
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
 * The expiry time (ms since the epoch) of a stored keyv envelope, NULL when it has none. Read off
 * the end of the text (JSON.stringify writes `{"value":…,"expires":N}`, and a complete value cannot
 * end in `"expires":N`) rather than by casting to jsonb: one row that is not JSON (hand-edited,
 * another program's in this shared table) failed that cast for the whole statement, so the
 * store would not open and expired rows were never purged again.
 */
function expiresOf(column: string): string {
  return `substring(${column} from '"expires":(-?\\d+(?:\\.\\d+)?)\\}$')::numeric`;
}
