/**
 * KeyvSpace: one namespace of the store as a KeyValueSpace — input checks, TTLs, grouped writes,
 * reads of keyv's rows straight from the backend (keyv's read added hooks, statistics and a
 * promise per row to every one), a write-if-absent that is atomic on Redis and SQLite and
 * serialised per key within this process elsewhere, and a compare-and-set and compare-and-delete
 * that are the backend's own (atomic on every backend), matching a value read or a row's exact
 * text. A row no value can be read from is an UnreadableRow (stored-row.ts): `get` and `getMany`
 * reject with it, `getRows` gives it beside the other keys' values.
 */
import type { Backend, ExpectedEntry, ReadEntry } from "./backends/backend.js";
import {
  expectedEntry,
  expectedText,
  ROW_TEXT,
  readEntry,
  serializeValue,
  UnreadableValue,
} from "./backends/backend.js";
import type { KeyedMutex } from "./key-mutex.js";
import type { KeyValueSpace, SpaceEntry, StoreNamespace } from "./store.js";
import { type RowRead, RowText, UnreadableRow } from "./stored-row.js";

/** Longest key accepted: leaves room for the namespace prefix inside SQL's 255-character key column. */
export const MAX_KEY_LENGTH = 200;

/**
 * Whether a key names the same row on every backend: it holds no half of a surrogate pair standing
 * alone (text that is not well-formed UTF-16: the Redis and Postgres drivers write a key as UTF-8,
 * turning each lone surrogate into U+FFFD, so keys differing only there, "x\uD800" and "x\uDBFF",
 * would name one row there and two on SQLite), and no NUL (Postgres cannot hold one in text).
 * Other control characters are held alike by all three. String's own isWellFormed (Node 20; typed
 * from ES2024 on, past this project's lib), where a Unicode-property regex cost twice as much.
 */
function storableKeyText(key: string): boolean {
  return (key as string & { isWellFormed(): boolean }).isWellFormed() && !key.includes("\u0000");
}

/** Guards shared by every space of one store. */
export interface SpaceContext {
  readonly backend: Backend;
  readonly mutex: KeyedMutex;
  /** Throws when the store has been closed. */
  readonly assertOpen: () => void;
  /** Registers a call in progress, so closing the store can wait for it. */
  readonly track: <T>(call: Promise<T>) => Promise<T>;
}

/** A namespaced key-value space over the backend's keyv instance for that namespace. */
export class KeyvSpace implements KeyValueSpace {
  constructor(
    private readonly namespace: StoreNamespace,
    private readonly context: SpaceContext,
  ) {}

  /** The stored value, or undefined when absent or expired; an UnreadableRow rejects for a row holding none. */
  get<T>(key: string): Promise<T | undefined> {
    return this.readKeys([key], (entries) => this.valueOf<T>(key, entries[0]));
  }

  /**
   * The values of `keys`, in order (undefined where absent or expired), in one backend call;
   * rejects with the first key's UnreadableRow when a row holds no value (getRows answers per key).
   */
  getMany<T>(keys: readonly string[]): Promise<Array<T | undefined>> {
    return this.readKeys(keys, (entries) => entries.map((entry, at) => this.valueOf<T>(keys[at]!, entry)));
  }

  /**
   * The rows of `keys`, in order, in one backend call: undefined where absent or expired, else
   * the value or the UnreadableRow held, each with its row's exact text (a RowText) as `expected`.
   */
  getRows<T>(keys: readonly string[]): Promise<Array<RowRead<T>>> {
    return this.readKeys(keys, (entries) => entries.map((entry, at) => this.rowOf<T>(keys[at]!, entry)));
  }

  /**
   * Write (or overwrite) a value, optionally expiring after `ttlMs` milliseconds: through the
   * backend's own grouped write when it has one (the same rows keyv writes), else keyv's `set`.
   */
  set(key: string, value: unknown, ttlMs?: number): Promise<void> {
    return this.guarded(
      () => this.check(key, value, ttlMs),
      () => this.write(key, value, ttlMs),
    );
  }

  /** Write the entries as one unit when the backend can, else one after another in order. */
  setMany(entries: readonly SpaceEntry[]): Promise<void> {
    return this.guarded(
      () => {
        for (const { key, value, ttlMs } of entries) this.check(key, value, ttlMs);
      },
      () => {
        const { backend } = this.context;
        if (entries.length === 0) return Promise.resolve();
        return backend.setMany ? backend.setMany(this.namespace, entries) : this.writeInOrder(entries);
      },
    );
  }

  /** Remove a key; true when it existed. */
  delete(key: string): Promise<boolean> {
    return this.guarded(
      () => this.check(key),
      () => this.context.backend.keyv(this.namespace).delete(key),
    );
  }

  /**
   * Write only when the key is absent (or expired by the caller's clock); true when this call
   * wrote it. Atomic across processes on Redis (one script), SQLite and Postgres (one conditional
   * upsert each); in memory it is a per-key mutex over get + set, as only one process holds it.
   */
  setIfAbsent(key: string, value: unknown, ttlMs?: number): Promise<boolean> {
    return this.guarded(
      () => this.check(key, value, ttlMs),
      async () => {
        const { backend, mutex } = this.context;
        if (backend.insertIfAbsent) {
          return backend.insertIfAbsent(this.namespace, key, serializeValue(value, ttlMs, Date.now()), ttlMs);
        }
        return mutex.run(`${this.namespace}\u0000${key}`, async () => {
          // A row holding no value is present too, as on the backends with their own insert.
          if (await this.read([key], ([entry]) => entry !== undefined)) return false;
          await this.write(key, value, ttlMs);
          return true;
        });
      },
    );
  }

  /**
   * Write `value` (expiring after `ttlMs` when given) only while `key` holds `expected`, with or
   * without an expiry, unexpired by this process's clock (compared as the text keyv wrote for it:
   * JSON gives back the same text for a value read from it) — or, when `expected` is a RowText,
   * while the row holds exactly that text, unexpired; true when this call wrote it. One
   * conditional write on every backend, atomic across processes.
   */
  replaceIf(key: string, expected: unknown, value: unknown, ttlMs?: number): Promise<boolean> {
    return this.guarded(
      () => {
        this.check(key, value, ttlMs);
        if (expected === undefined)
          throw new Error(
            `store: replaceIf at ${this.namespace}/${key} needs the value expected (use setIfAbsent)`,
          );
      },
      () => {
        const now = Date.now();
        const held = expectedOf(expected, now);
        const serialized = serializeValue(value, ttlMs, now);
        if (!held) return Promise.resolve(false);
        return this.context.backend.replaceIf(this.namespace, key, held, serialized, ttlMs);
      },
    );
  }

  /**
   * Delete `key` only while it holds `expected` (a value, or a RowText), with or without an
   * expiry, unexpired by this process's clock (compared as replaceIf compares); true when this
   * call deleted it. One conditional delete on every backend, atomic across processes.
   */
  deleteIf(key: string, expected: unknown): Promise<boolean> {
    return this.guarded(
      () => {
        this.check(key);
        if (expected === undefined)
          throw new Error(`store: deleteIf at ${this.namespace}/${key} needs the value expected`);
      },
      () => {
        const held = expectedOf(expected, Date.now());
        return held ? this.context.backend.deleteIf(this.namespace, key, held) : Promise.resolve(false);
      },
    );
  }

  /** Check `keys`, then read their entries in one backend call (none for no keys) and answer `from` them. */
  private readKeys<R>(
    keys: readonly string[],
    from: (entries: ReadonlyArray<ReadEntry | undefined>) => R,
  ): Promise<R> {
    return this.guarded(
      () => {
        for (const key of keys) this.check(key);
      },
      () => (keys.length === 0 ? Promise.resolve(from([])) : this.read(keys, from)),
    );
  }

  /**
   * Read the rows of `keys` from the backend in one call, and answer `from` their entries, in order
   * (undefined where absent or expired).
   */
  private read<R>(
    keys: readonly string[],
    from: (entries: ReadonlyArray<ReadEntry | undefined>) => R,
  ): Promise<R> {
    return this.context.backend.rowTexts(this.namespace, keys).then((rows) => from(rows.map(readEntry)));
  }

  /**
   * Check the arguments, then run and track the call; either failing rejects. The calls on the
   * turn path are plain functions returning the backend's promise: an async wrapper costs more
   * promises per store call.
   */
  private guarded<T>(check: () => void, call: () => Promise<T>): Promise<T> {
    let pending: Promise<T>;
    try {
      check();
      pending = call(); // a value JSON cannot hold throws here, and rejects like any other failure
    } catch (error) {
      return Promise.reject(error);
    }
    return this.context.track(pending);
  }

  /** The value of the entry read at `key`; throws the UnreadableRow of a row holding none. */
  private valueOf<T>(key: string, entry: ReadEntry | undefined): T | undefined {
    const value = entry?.value;
    if (value instanceof UnreadableValue) throw this.unreadable(key, value);
    return value as T | undefined;
  }

  /** A row as `getRows` gives it, from the entry read at `key` (undefined: absent or expired). */
  private rowOf<T>(key: string, entry: ReadEntry | undefined): RowRead<T> {
    if (entry === undefined) return undefined;
    const { value, expires } = entry;
    if (value instanceof UnreadableValue) {
      const unreadable = this.unreadable(key, value);
      return { unreadable, expected: unreadable.row };
    }
    // A row in other text than the store writes may hold any expiry (`null`): reads judge numbers only.
    const expiry = typeof expires === "number" ? expires : undefined;
    return { value: value as T, expected: new RowText(entry[ROW_TEXT], expiry) };
  }

  private unreadable(key: string, value: UnreadableValue): UnreadableRow {
    return new UnreadableRow(this.namespace, key, value.row, value.reason);
  }

  private async writeInOrder(entries: readonly SpaceEntry[]): Promise<void> {
    for (const { key, value, ttlMs } of entries) await this.write(key, value, ttlMs);
  }

  private write(key: string, value: unknown, ttlMs: number | undefined): Promise<void> {
    const { backend } = this.context;
    if (backend.setMany) return backend.setMany(this.namespace, [{ key, value, ttlMs }]);
    return backend
      .keyv(this.namespace)
      .set(key, value, ttlMs)
      .then((written) => {
        if (!written) throw new Error(`store: writing ${this.namespace}/${key} failed`);
      });
  }

  private check(key: string, ...write: [value: unknown, ttlMs: number | undefined] | []): void {
    this.context.assertOpen();
    if (write.length === 0) checkKey(this.namespace, key);
    else checkEntry(this.namespace, key, ...write);
  }
}

/** What a compare-and-set or compare-and-delete at `now` expects for `expected`, a value or a RowText. */
function expectedOf(expected: unknown, now: number): ExpectedEntry | undefined {
  return expected instanceof RowText ? expectedText(expected, now) : expectedEntry(expected, now);
}

/**
 * Throws unless `key` can name a row in `namespace` on every backend: 1–MAX_KEY_LENGTH characters,
 * no lone surrogate, no NUL. Every store call checks its keys here, and so does anything writing the
 * store's keys by another path (redis-coordination.ts), so a key refused by one is refused by all.
 */
export function checkKey(namespace: StoreNamespace, key: string): void {
  if (typeof key !== "string" || key.length === 0 || key.length > MAX_KEY_LENGTH) {
    throw new Error(`store: key in ${namespace} must be a string of 1–${MAX_KEY_LENGTH} characters`);
  }
  if (!storableKeyText(key)) {
    throw new Error(
      `store: key in ${namespace} must be well-formed Unicode text (no lone surrogate) without NUL characters`,
    );
  }
}

/**
 * Throws unless `key`, `value` and `ttlMs` make an entry the store can write: a key as checkKey
 * wants, a value other than undefined (a delete is a delete), and a TTL, when given, that is a
 * positive whole number of milliseconds.
 */
export function checkEntry(
  namespace: StoreNamespace,
  key: string,
  value: unknown,
  ttlMs: number | undefined,
): void {
  checkKey(namespace, key);
  if (value === undefined) {
    throw new Error(`store: cannot store undefined at ${namespace}/${key} (use delete)`);
  }
  if (ttlMs !== undefined && !(Number.isSafeInteger(ttlMs) && ttlMs > 0)) {
    throw new Error(`store: ttlMs for ${namespace}/${key} must be a positive whole number of milliseconds`);
  }
}
