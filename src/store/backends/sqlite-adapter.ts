/**
 * SqliteAdapter: a keyv store adapter over one better-sqlite3 connection, with prepared statements
 * and group commit. Writes issued during one turn of the event loop are committed together in one
 * transaction at the end of that turn (one WAL append instead of one per write), and each write's
 * promise resolves only once that commit is done. A read of a key with a write still queued first
 * commits the queued writes, so every read sees every write of its key issued before it; a read of
 * any other key reads the file as it is and leaves the batch to commit whole at the end of the turn
 * (reads interleaved with writes used to split one turn's batch into many small commits).
 *
 * A batch is applied in one transaction; should a statement fail, the batch is applied again with
 * each write in a savepoint of its own, so a `setMany` is committed whole or not at all and one
 * failing write never fails the writes grouped with it (savepoints cost a quarter of a batch's
 * time, so only a failing batch pays for them). `insertIfAbsent` is a
 * conditional upsert, `replaceIf` a conditional update and `deleteIf` a conditional delete (an
 * expired row counts as absent for each), each atomic across processes sharing the file (the
 * table's SQL is in sqlite-statements.ts).
 * The driver is synchronous: a statement runs on the main thread, which for this key-value table
 * (point reads and writes by primary key) is far cheaper than a round trip to a worker thread.
 * Checkpoints (copying the log into the file, with its fsyncs) are the exception: a worker thread
 * runs them (SqliteCheckpointer), so commits never wait for the disk. While the checkpointer holds
 * commits (a short catch-up so the log can start over), the end-of-turn commits wait; a read of a
 * key with a write queued still commits at once.
 *
 * Another connection holding the file's write lock must not stall the event loop: a batch that
 * finds the file locked stays queued, whole, and is tried again between loop turns until
 * `busyTimeoutMs`, then fails (SqliteLockWait, sqlite-lock-wait.ts, says how).
 *
 * Expired rows are purged a bounded window of the table at a time, each window one queued write,
 * so a large table never holds the loop for the whole scan.
 *
 * The database file and its -wal / -shm files are owner-only (0600, core/private-files.ts): the file
 * is made so before SQLite opens it (SQLite gives the -wal and -shm it creates the database file's
 * mode), and -wal / -shm made before are tightened once open.
 */
import { EventEmitter } from "node:events";
import { ensurePrivateFile, tightenIfPresent } from "../../core/private-files.js";
import Database from "better-sqlite3";
import { type ExpectedEntry, SharedAdapterClearError } from "./backend.js";
import { type CheckpointTiming, SqliteCheckpointer } from "./sqlite-checkpointer.js";
import { isLocked, LOCK_WAIT_ON_THREAD_MS, SqliteLockWait } from "./sqlite-lock-wait.js";
import { holding, prepare } from "./sqlite-statements.js";

/** The most rows one `setMany` may hold (a guard against unbounded transactions). */
export const MAX_ROWS_PER_WRITE = 16_000;

/** The log file is cut back to this size whenever it starts over (after a burst made it larger). */
const WAL_SIZE_LIMIT_BYTES = 16 * 1_048_576;

/**
 * Rows of the table one purge step looks at: about a millisecond at 4 KB a row (one scan of
 * 300,000 such rows held the loop for 0.5-1.5 s).
 */
const PURGE_WINDOW_ROWS = 500;

/** What opens the adapter: the file, its table, and how long to wait for another process's lock. */
export interface SqliteAdapterOptions {
  readonly file: string;
  readonly table: string;
  /** How long queued writes wait for another connection's write lock before they fail. */
  readonly busyTimeoutMs: number;
  /** Told when background checkpoints fail (the connection then checkpoints itself). */
  readonly onCheckpointError?: (error: unknown) => void;
  /** When background checkpoints run (default DEFAULT_CHECKPOINT_TIMING). */
  readonly checkpoints?: CheckpointTiming;
}

type Outcome<R> = { resolve(result: R): void; fail(error: unknown): void };
type Write =
  | ({ kind: "upsert"; rows: ReadonlyArray<readonly [string, string]> } & Outcome<boolean>)
  | ({ kind: "delete"; key: string } & Outcome<boolean>)
  | ({ kind: "insert"; key: string; value: string } & Outcome<boolean>)
  | ({ kind: "replace"; key: string; expected: ExpectedEntry; value: string } & Outcome<boolean>)
  | ({ kind: "deleteIf"; key: string; expected: ExpectedEntry } & Outcome<boolean>)
  | ({ kind: "purge"; after: number; upTo: number } & Outcome<boolean>);

/** A keyv store adapter over one SQLite connection, group-committing the writes of each loop turn. */
export class SqliteAdapter extends EventEmitter {
  /** What keyv reads from an adapter (it sets `namespace` itself). */
  readonly opts: { readonly dialect: "sqlite"; readonly url: string; readonly table: string };
  namespace?: string | undefined;
  private readonly db: Database.Database;
  private readonly statements: ReturnType<typeof prepare>;
  private readonly commitBatch: (batch: readonly Write[]) => Array<{ ok: boolean; value: unknown }>;
  private readonly checkpointer: SqliteCheckpointer;
  private pending: Write[] = [];
  /** Keys written by the queued writes: reading one of them commits the batch first. */
  private readonly pendingKeys = new Set<string>();
  private flushTimer: NodeJS.Immediate | undefined;
  /** The checkpointer holds the end-of-turn commits (see SqliteCheckpointer). */
  private held = false;
  /** The queued batch's wait for another connection's lock (see the header). */
  private readonly lockWait: SqliteLockWait;
  /** When disconnect() began (Date.now()), or undefined while open. */
  private closingAt: number | undefined;

  /**
   * Opens the file (creating it, owner-only, and the table when missing) in WAL mode with
   * `synchronous`.
   */
  constructor(options: SqliteAdapterOptions & { readonly synchronous: "NORMAL" | "FULL" }) {
    super();
    this.opts = { dialect: "sqlite", url: `sqlite://${options.file}`, table: options.table };
    this.lockWait = new SqliteLockWait({
      file: options.file,
      busyTimeoutMs: options.busyTimeoutMs,
      retry: () => this.flush(),
    });
    ensurePrivateFile(options.file);
    // Statements wait for a lock on the thread this long at most; longer locks are waited out
    // between loop turns (a locked batch) or by trying the opening again (openSqliteBackend).
    this.db = new Database(options.file, { timeout: LOCK_WAIT_ON_THREAD_MS });
    try {
      this.db.pragma("journal_mode = WAL");
      this.db.pragma(`synchronous = ${options.synchronous}`);
      this.db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
      this.db.exec(`CREATE TABLE IF NOT EXISTS ${options.table}(key VARCHAR(255) PRIMARY KEY, value TEXT )`);
      for (const suffix of ["-wal", "-shm"]) tightenIfPresent(`${options.file}${suffix}`);
      this.statements = prepare(this.db, options.table);
    } catch (error) {
      this.db.close();
      throw error;
    }
    this.checkpointer = new SqliteCheckpointer(
      {
        file: options.file,
        busyTimeoutMs: options.busyTimeoutMs,
        autoCheckpoint: (pages) => this.db.pragma(`wal_autocheckpoint = ${pages}`),
        holdCommits: (hold) => this.holdCommits(hold),
        onError: (error) => options.onCheckpointError?.(error),
      },
      options.checkpoints,
    );
    const applyAll = this.db.transaction((batch: readonly Write[]) =>
      batch.map((write) => this.apply(write)),
    );
    const apply = this.db.transaction((write: Write) => this.apply(write));
    const applyEach = this.db.transaction((batch: readonly Write[]) =>
      batch.map((write) => {
        try {
          return { ok: true, value: apply(write) };
        } catch (error) {
          return { ok: false, value: error };
        }
      }),
    );
    // IMMEDIATE: the write lock is taken at BEGIN, so a locked file fails the batch before any write.
    this.commitBatch = (batch) => {
      try {
        return applyAll.immediate(batch).map((value) => ({ ok: true, value }));
      } catch (error) {
        if (isLocked(error)) throw error;
        // A statement failed and the batch was rolled back: once more, each write on its own.
        return applyEach.immediate(batch);
      }
    };
  }

  /** The stored (serialised) value, or undefined. */
  async get<Value>(key: string): Promise<Value | undefined> {
    const queued = this.flushFor(key);
    if (queued) await queued;
    return this.statements.get.get(key)?.value as Value | undefined;
  }

  /** The stored values of `keys`, in order (undefined where absent). */
  async getMany<Value>(keys: string[]): Promise<Array<Value | undefined>> {
    for (const key of keys) {
      const queued = this.flushFor(key);
      if (queued) await queued;
    }
    return keys.map((key) => this.statements.get.get(key)?.value as Value | undefined);
  }

  /** Whether a row holds `key` (expired or not: keyv checks expiry). */
  async has(key: string): Promise<boolean> {
    const queued = this.flushFor(key);
    if (queued) await queued;
    return this.statements.get.get(key) !== undefined;
  }

  /** Write one row at the end of this loop turn. */
  set(key: string, value: string): Promise<boolean> {
    return this.enqueue((outcome) => ({ kind: "upsert", rows: [[key, value]], ...outcome }));
  }

  /**
   * Write every entry in one savepoint: all of them are committed, or none. Every store write
   * comes through here, so it is a plain function (an async one cost two more promises per write).
   */
  setMany(entries: ReadonlyArray<{ key: string; value: string }>): Promise<void> {
    if (entries.length > MAX_ROWS_PER_WRITE) {
      return Promise.reject(
        new Error(`store: setMany takes at most ${MAX_ROWS_PER_WRITE} entries, got ${entries.length}`),
      );
    }
    const rows = entries.map((entry) => [entry.key, entry.value] as const);
    if (rows.length === 0) return Promise.resolve();
    return this.enqueue<void>(({ resolve, fail }) => ({
      kind: "upsert",
      rows,
      resolve: () => resolve(),
      fail,
    }));
  }

  /** Remove a row; true when it existed. */
  delete(key: string): Promise<boolean> {
    return this.enqueue((outcome) => ({ kind: "delete", key, ...outcome }));
  }

  /** Remove rows; true when any existed. */
  async deleteMany(keys: string[]): Promise<boolean> {
    const deleted = await Promise.all(keys.map((key) => this.delete(key)));
    return deleted.some(Boolean);
  }

  /** Write `value` unless a live (unexpired) row holds `key`; true when this call wrote it. */
  insertIfAbsent(key: string, value: string): Promise<boolean> {
    return this.enqueue((outcome) => ({ kind: "insert", key, value, ...outcome }));
  }

  /**
   * Write `value` only while the row of `key` holds the entry `expected` describes, unexpired at
   * its `now` (see ExpectedEntry); true when this call wrote it.
   */
  replaceIf(key: string, expected: ExpectedEntry, value: string): Promise<boolean> {
    return this.enqueue((outcome) => ({ kind: "replace", key, expected, value, ...outcome }));
  }

  /**
   * Delete the row of `key` only while it holds the entry `expected` describes, unexpired at its
   * `now` (see ExpectedEntry); true when this call deleted it.
   */
  deleteIf(key: string, expected: ExpectedEntry): Promise<boolean> {
    return this.enqueue((outcome) => ({ kind: "deleteIf", key, expected, ...outcome }));
  }

  /**
   * Refused (keyv's `clear`): every namespace shares this adapter and its one `namespace` field
   * (keyv sets it per instance, the last one wins), so it cannot know whose rows to delete.
   */
  async clear(): Promise<void> {
    throw new SharedAdapterClearError();
  }

  /**
   * Delete every row whose keyv envelope says it has expired, PURGE_WINDOW_ROWS rows of the table
   * at a time, each window a queued write of its own (other work runs between them). Stops when
   * the adapter closes.
   */
  async purgeExpired(): Promise<void> {
    let after = Number.MIN_SAFE_INTEGER;
    while (this.closingAt === undefined) {
      const upTo = this.statements.windowEnd.get(after, PURGE_WINDOW_ROWS)?.upTo;
      if (upTo === null || upTo === undefined) return;
      const from = after;
      await this.enqueue<boolean>((outcome) => ({ kind: "purge", after: from, upTo, ...outcome }));
      after = upTo;
    }
  }

  /** One trivial query: throws when the connection is unusable. */
  ping(): void {
    this.db.prepare("SELECT 1").get();
  }

  /**
   * Commit every queued write (waiting out another connection's lock, up to `busyTimeoutMs`), let
   * the last checkpoint finish, then close the connection.
   */
  async disconnect(): Promise<void> {
    this.closingAt = Date.now();
    for (;;) {
      if (!this.lockWait.waiting) this.flush();
      const settled = this.lockWait.settled;
      if (!settled) break;
      await settled;
    }
    await this.checkpointer.close();
    this.db.close();
  }

  private enqueue<R>(make: (outcome: Outcome<R>) => Write): Promise<R> {
    return new Promise<R>((resolve, fail) => {
      const write = make({ resolve, fail } as Outcome<R>);
      this.pending.push(write);
      if (write.kind === "upsert") for (const [key] of write.rows) this.pendingKeys.add(key);
      else if (write.kind !== "purge") this.pendingKeys.add(write.key);
      this.flushTimer ??= setImmediate(() => this.commitAtTurnEnd());
    });
  }

  /**
   * The end-of-turn commit, unless the checkpointer holds commits (they go when it lets go) or the
   * batch waits for another connection's lock (its retry timer commits it).
   */
  private commitAtTurnEnd(): void {
    this.flushTimer = undefined;
    if (!this.held && !this.lockWait.waiting) this.flush();
  }

  private holdCommits(hold: boolean): void {
    this.held = hold;
    if (!hold && this.pending.length > 0) this.flushTimer ??= setImmediate(() => this.commitAtTurnEnd());
  }

  /**
   * Commit the queued writes first when one of them writes `key`; when they wait for another
   * connection's lock, the promise of their settling (committed, or failed at the deadline).
   */
  private flushFor(key: string): Promise<void> | undefined {
    if (!this.pendingKeys.has(key)) return undefined;
    if (!this.lockWait.waiting) this.flush();
    return this.lockWait.settled;
  }

  /** Commit the queued writes in one transaction, then settle each one. */
  private flush(): void {
    if (this.flushTimer) clearImmediate(this.flushTimer);
    this.flushTimer = undefined;
    const batch = this.pending;
    if (batch.length === 0) return;
    let outcomes: Array<{ ok: boolean; value: unknown }>;
    try {
      outcomes = this.commitBatch(batch);
    } catch (error) {
      if (isLocked(error) && this.lockWait.retryLater(this.closingAt)) return;
      this.takePending();
      const failure = isLocked(error)
        ? this.lockWait.lockedError(error, this.closingAt !== undefined)
        : error;
      for (const write of batch) write.fail(failure);
      return;
    }
    this.takePending();
    let rows = 0;
    batch.forEach((write, index) => {
      const { ok, value } = outcomes[index]!;
      if (ok) write.resolve(value as boolean);
      else write.fail(value);
      rows += write.kind === "upsert" ? write.rows.length : 1;
    });
    this.checkpointer.committed(rows);
  }

  /** Empty the queue (its batch is being settled) and end any wait for the lock. */
  private takePending(): void {
    this.pending = [];
    this.pendingKeys.clear();
    this.lockWait.end();
  }

  private apply(write: Write): boolean {
    switch (write.kind) {
      case "upsert":
        for (const [key, value] of write.rows) this.statements.upsert.run(key, value);
        return true;
      case "delete":
        return this.statements.delete.run(write.key).changes > 0;
      case "insert":
        return this.statements.insertIfAbsent.run(write.key, write.value, Date.now()).changes > 0;
      case "replace":
        return (
          this.statements.replaceIf.run({ value: write.value, ...holding(write.key, write.expected) })
            .changes > 0
        );
      case "deleteIf":
        return this.statements.deleteIf.run(holding(write.key, write.expected)).changes > 0;
      case "purge":
        return this.statements.purge.run(write.after, write.upTo, Date.now()).changes > 0;
    }
  }
}
