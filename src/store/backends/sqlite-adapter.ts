/**
 * GroupedSqliteAdapter: the @keyv/sqlite adapter with group commit. Reads and writes issued while
 * the connection is busy are gathered and sent as one multi-row statement each, so concurrent
 * sessions share round trips and commits instead of queueing one statement each behind the
 * single connection.
 *
 * Writes keep their order: a batch is cut into runs of the same kind (upserts, deletes, inserts
 * if absent) executed one after another, and within a statement later rows win. A `setMany`
 * always travels in one statement, so its entries are committed together or not at all; when a
 * shared statement fails, its writes are retried alone, so one bad write never fails another.
 * `insertIfAbsent` is a conditional upsert (an expired row counts as absent), atomic across
 * processes sharing the file.
 */
import { KeyvSqlite, type KeyvSqliteOptions } from "@keyv/sqlite";
import { GroupQueue } from "./group-queue.js";

/** Rows gathered into one statement (two bound values each, well under SQLite's 32,766). */
const ROWS_PER_STATEMENT = 2_000;
/** The most rows one `setMany` may hold: it must fit one statement. */
export const MAX_ROWS_PER_WRITE = 16_000;

type Outcome<R> = { resolve(result: R): void; fail(error: unknown): void };

type Upsert = { kind: "upsert"; rows: ReadonlyArray<readonly [string, string]> } & Outcome<void>;
type Delete = { kind: "delete"; key: string } & Outcome<boolean>;
type Insert = { kind: "insert"; key: string; value: string } & Outcome<boolean>;
type Write = Upsert | Delete | Insert;

type Read = { key: string } & Outcome<string | undefined>;

/** A keyv store adapter over one SQLite connection, with grouped reads and writes. */
export class GroupedSqliteAdapter extends KeyvSqlite {
  private readonly writes = new GroupQueue<Write>((batch) => this.writeBatch(batch));
  private readonly reads = new GroupQueue<Read>((batch) => this.readBatch(batch));
  private readonly table: string;

  constructor(options: KeyvSqliteOptions) {
    super(options);
    this.table = this.opts.table ?? "keyv";
  }

  override get<Value>(key: string): Promise<Value | undefined> {
    return new Promise<string | undefined>((resolve, reject) => {
      this.reads.push({ key, resolve, fail: reject });
    }) as Promise<Value | undefined>;
  }

  override set(key: string, value: string): Promise<void> {
    return this.upsert([[key, value]]);
  }

  /** Write every entry in one statement: all of them are committed, or none. */
  async setMany(entries: ReadonlyArray<{ key: string; value: string }>): Promise<void> {
    if (entries.length > MAX_ROWS_PER_WRITE) {
      throw new Error(`store: setMany takes at most ${MAX_ROWS_PER_WRITE} entries, got ${entries.length}`);
    }
    if (entries.length > 0) await this.upsert(entries.map((e) => [e.key, e.value] as const));
  }

  override delete(key: string): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.writes.push({ kind: "delete", key, resolve, fail: reject });
    });
  }

  override async deleteMany(keys: string[]): Promise<boolean> {
    const deleted = await Promise.all(keys.map((key) => this.delete(key)));
    return deleted.some(Boolean);
  }

  /** Write `value` unless a live (unexpired) row holds `key`; true when this call wrote it. */
  insertIfAbsent(key: string, value: string): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.writes.push({ kind: "insert", key, value, resolve, fail: reject });
    });
  }

  /** Finish every queued read and write, then close the connection. */
  override async disconnect(): Promise<void> {
    await this.writes.idle();
    await this.reads.idle();
    await super.disconnect();
  }

  private upsert(rows: ReadonlyArray<readonly [string, string]>): Promise<void> {
    return new Promise((resolve, reject) => {
      this.writes.push({ kind: "upsert", rows, resolve, fail: reject });
    });
  }

  private async readBatch(batch: readonly Read[]): Promise<void> {
    const keys = [...new Set(batch.map((read) => read.key))];
    const found = new Map<string, string>();
    for (let start = 0; start < keys.length; start += ROWS_PER_STATEMENT) {
      const chunk = keys.slice(start, start + ROWS_PER_STATEMENT);
      const rows: Array<{ key: string; value: string }> = await this.query(
        `SELECT key, value FROM ${this.table} WHERE key IN (${placeholders(chunk.length, 1)})`,
        ...chunk,
      );
      for (const row of rows) found.set(row.key, row.value);
    }
    for (const read of batch) read.resolve(found.get(read.key));
  }

  /**
   * Runs of one kind, in order; each run in statements of whole writes. When a shared statement
   * fails, its writes are retried one by one, so a write fails only for its own sake.
   */
  private async writeBatch(batch: readonly Write[]): Promise<void> {
    for (const statement of statements(batch)) {
      try {
        await this.execute(statement);
      } catch (error) {
        if (statement.length === 1) statement[0]!.fail(error);
        else for (const write of statement) await this.execute([write]).catch((alone) => write.fail(alone));
      }
    }
  }

  private async execute(statement: readonly Write[]): Promise<void> {
    const first = statement[0]!;
    if (first.kind === "upsert") {
      const rows = (statement as readonly Upsert[]).flatMap((write) => write.rows);
      await this.query(
        `INSERT INTO ${this.table} (key, value) VALUES ${placeholders(rows.length, 2)} ` +
          "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        ...rows.flat(),
      );
      for (const write of statement as readonly Upsert[]) write.resolve();
      return;
    }
    // A key named twice in one statement: its first mention decides; later ones find it gone / taken.
    const firsts = new Map<string, Delete | Insert>();
    for (const write of statement as ReadonlyArray<Delete | Insert>)
      if (!firsts.has(write.key)) firsts.set(write.key, write);
    const touched = new Set(
      first.kind === "delete"
        ? await this.deleteKeys([...firsts.keys()])
        : await this.insertAbsent([...firsts.values()] as Insert[]),
    );
    for (const write of statement as ReadonlyArray<Delete | Insert>)
      write.resolve(firsts.get(write.key) === write && touched.has(write.key));
  }

  /** Delete the keys; returns those that existed. */
  private async deleteKeys(keys: readonly string[]): Promise<string[]> {
    const rows: Array<{ key: string }> = await this.query(
      `DELETE FROM ${this.table} WHERE key IN (${placeholders(keys.length, 1)}) RETURNING key`,
      ...keys,
    );
    return rows.map((row) => row.key);
  }

  /** Insert each key unless a live row holds it (an expired one is overwritten); returns the keys written. */
  private async insertAbsent(writes: readonly Insert[]): Promise<string[]> {
    const expires = `CASE WHEN json_valid(${this.table}.value) THEN json_extract(${this.table}.value, '$.expires') END`;
    const rows: Array<{ key: string }> = await this.query(
      `INSERT INTO ${this.table} (key, value) VALUES ${placeholders(writes.length, 2)} ` +
        `ON CONFLICT(key) DO UPDATE SET value = excluded.value WHERE (${expires}) < ? RETURNING key`,
      ...writes.flatMap((write) => [write.key, write.value]),
      Date.now(),
    );
    return rows.map((row) => row.key);
  }
}

/** Cut a batch into statements: same-kind runs, at most ROWS_PER_STATEMENT rows unless one write holds more. */
function statements(batch: readonly Write[]): Write[][] {
  const out: Write[][] = [];
  let current: Write[] = [];
  let rows = 0;
  for (const write of batch) {
    const size = write.kind === "upsert" ? write.rows.length : 1;
    const sameKind = current.length > 0 && current[0]!.kind === write.kind;
    if (current.length > 0 && (!sameKind || rows + size > ROWS_PER_STATEMENT)) {
      out.push(current);
      current = [];
      rows = 0;
    }
    current.push(write);
    rows += size;
  }
  if (current.length > 0) out.push(current);
  return out;
}

/** "(?, ?), (?, ?)" for rows of `width` values, or "?, ?" for width 1. */
function placeholders(rows: number, width: 1 | 2): string {
  return Array.from({ length: rows }, () => (width === 1 ? "?" : "(?, ?)")).join(", ");
}
