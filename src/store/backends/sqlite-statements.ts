/**
 * The SQL of SqliteAdapter's key-value table, prepared once per connection: point reads and
 * writes by key, the conditional writes (insert-if-absent, compare-and-set, compare-and-delete)
 * that judge a row live by the expiry in its keyv envelope, and the windowed purge of expired
 * rows. Kept apart from the adapter, which queues and group-commits the writes these run.
 */
import type Database from "better-sqlite3";
import type { ExpectedEntry } from "./backend.js";

/** The named parameters of `prepare`'s `holds`: the row of `key` holds the entry `expected` describes. */
export function holding(key: string, expected: ExpectedEntry) {
  return { key, exact: expected.exact, start: expected.expiringStart, now: expected.now } as const;
}
type Holding = ReturnType<typeof holding>;

/** The adapter's prepared statements on `table`. */
export function prepare(db: Database.Database, table: string) {
  const expires = `CASE WHEN json_valid(${table}.value) THEN json_extract(${table}.value, '$.expires') END`;
  /**
   * The row of @key holds the entry @exact without an expiry, or with one (@start…, when @start is
   * not empty) not passed at @now.
   */
  const holds =
    `key = @key AND (value = @exact OR ` +
    `(length(@start) > 0 AND substr(value, 1, length(@start)) = @start AND (${expires}) >= @now))`;
  return {
    /** The last rowid of the next purge window: at most `limit` rows after rowid `after`. */
    windowEnd: db.prepare<[number, number], { upTo: number | null }>(
      `SELECT max(rowid) AS upTo FROM (SELECT rowid FROM ${table} WHERE rowid > ? ORDER BY rowid LIMIT ?)`,
    ),
    purge: db.prepare<[number, number, number]>(
      `DELETE FROM ${table} WHERE rowid > ? AND rowid <= ? AND (${expires}) < ?`,
    ),
    get: db.prepare<[string], { value: string }>(`SELECT value FROM ${table} WHERE key = ?`),
    upsert: db.prepare<[string, string]>(
      `INSERT INTO ${table} (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`,
    ),
    delete: db.prepare<[string]>(`DELETE FROM ${table} WHERE key = ?`),
    insertIfAbsent: db.prepare<[string, string, number]>(
      `INSERT INTO ${table} (key, value) VALUES (?, ?) ` +
        `ON CONFLICT(key) DO UPDATE SET value = excluded.value WHERE (${expires}) < ?`,
    ),
    replaceIf: db.prepare<[Holding & { value: string }]>(`UPDATE ${table} SET value = @value WHERE ${holds}`),
    deleteIf: db.prepare<[Holding]>(`DELETE FROM ${table} WHERE ${holds}`),
  };
}
