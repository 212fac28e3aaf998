/**
 * Store: the one storage layer, a set of namespaced key-value spaces on keyv. The backend is an
 * embedded SQLite file by default, or Redis / Postgres from COWORKER_STORE_URL.
 */
import { type RowRead, UnreadableRow } from "./stored-row.js";

export const STORE_NAMESPACES = [
  "sessions",
  "history",
  "approvals",
  "questions",
  "grants",
  "dedupe",
  "journal",
  "subscriptions",
  "buffers",
  "memory",
  "skills",
  "schedules",
  /** Each session's compaction summary and the boundary it covers (app/compaction-states.ts). */
  "compaction",
  /**
   * Rate-limit slots shared by every process on the store: transcriptions per person, wake-ups
   * per subscription and wake_me_later calls per conversation (store/slot-budget.ts); and the bytes of
   * files each person had saved in the last day (store/byte-budget.ts).
   */
  "budgets",
] as const;
export type StoreNamespace = (typeof STORE_NAMESPACES)[number];

/** One write of a `setMany`. */
export interface SpaceEntry {
  readonly key: string;
  readonly value: unknown;
  readonly ttlMs?: number;
}

export interface KeyValueSpace {
  /**
   * The value at `key` (undefined when absent or expired); rejects with an UnreadableRow
   * (stored-row.ts) when the row there holds no value the store can read.
   */
  get<T>(key: string): Promise<T | undefined>;
  /**
   * The values of several keys, in order (undefined where absent): one round trip where the
   * backend can (Redis MGET); one row holding no readable value rejects the whole read with its
   * UnreadableRow (`readRows` answers per key). Optional (spaces built elsewhere may lack it): call
   * it through `getAll`.
   */
  getMany?<T>(keys: readonly string[]): Promise<Array<T | undefined>>;
  /**
   * The rows of several keys, in order, in one round trip: per key undefined (absent), its value,
   * or its UnreadableRow, each with its exact text as `expected` (a RowText). Optional (spaces
   * built elsewhere may lack it): call it through `readRows`.
   */
  getRows?<T>(keys: readonly string[]): Promise<Array<RowRead<T>>>;
  set(key: string, value: unknown, ttlMs?: number): Promise<void>;
  delete(key: string): Promise<boolean>;
  /** Write only when the key is absent; true when this call wrote it (dedupe, first press wins). */
  setIfAbsent(key: string, value: unknown, ttlMs?: number): Promise<boolean>;
  /**
   * Write several keys as one unit where the backend can (SQLite: all or none, in one commit),
   * else one after another in order — either way a reader never sees an entry without those
   * listed before it, so a record written last can serve as the commit point. Optional (spaces
   * built elsewhere may lack it): call it through `setAll`, which hands its promise on as it is,
   * so it must report a failure by rejecting, never by throwing.
   */
  setMany?(entries: readonly SpaceEntry[]): Promise<void>;
  /**
   * Compare-and-set: write `value` (expiring after `ttlMs` when given, else never) only while
   * `key` still holds `expected` — a value read from it and handed back as it came, compared as
   * the JSON the store holds, whether or not it was written with a TTL; or a row's RowText (from
   * `readRows`, or an UnreadableRow's `row`), matched only while the row holds exactly that text,
   * so a row in other text than the store writes, or holding no readable value, can be replaced
   * too — atomically across every process on the store; true when this call wrote it. False
   * (nothing written) when the key is absent (deleted meanwhile, or expired by this process's
   * clock, as `get` judges it) or holds anything else (written meanwhile).
   */
  replaceIf(key: string, expected: unknown, value: unknown, ttlMs?: number): Promise<boolean>;
  /**
   * Compare-and-delete: delete `key` only while it still holds `expected` (a value read from it,
   * compared as `replaceIf` compares, live), atomically across every process on the store; true
   * when this call deleted it. False (nothing deleted) when the key is absent or holds anything else.
   */
  deleteIf(key: string, expected: unknown): Promise<boolean>;
}

/** `space.getMany(keys)` when the space has it, else one `get` per key. */
export function getAll<T>(space: KeyValueSpace, keys: readonly string[]): Promise<Array<T | undefined>> {
  if (space.getMany) return space.getMany<T>(keys);
  return Promise.all(keys.map((key) => space.get<T>(key)));
}

/**
 * The rows of `keys`, in order (see `getRows`): `space.getRows(keys)` when the space has it, else
 * one `get` per key, whose values come with themselves as `expected` (compared as values, so a row
 * in other text than the store writes is not matched) and whose UnreadableRow comes per key.
 */
export function readRows<T>(space: KeyValueSpace, keys: readonly string[]): Promise<Array<RowRead<T>>> {
  if (space.getRows) return space.getRows<T>(keys);
  return Promise.all(keys.map((key) => readRow<T>(space, key)));
}

async function readRow<T>(space: KeyValueSpace, key: string): Promise<RowRead<T>> {
  try {
    const value = await space.get<T>(key);
    return value === undefined ? undefined : { value, expected: value };
  } catch (error) {
    if (error instanceof UnreadableRow) return { unreadable: error, expected: error.row };
    throw error;
  }
}

/**
 * `space.setMany(entries)` when the space has it, else the same writes one after another in order.
 * Not async, as getAll: every store write of a turn comes through here.
 */
export function setAll(space: KeyValueSpace, entries: readonly SpaceEntry[]): Promise<void> {
  return space.setMany ? space.setMany(entries) : setInOrder(space, entries);
}

async function setInOrder(space: KeyValueSpace, entries: readonly SpaceEntry[]): Promise<void> {
  for (const { key, value, ttlMs } of entries) await space.set(key, value, ttlMs);
}

/**
 * A health ping's answer: ok, or not with the reason (Redis offline, a Postgres login refused, a
 * SQLite file locked, no answer in time) — the backend's message, which never holds credentials.
 */
export interface StoreHealth {
  readonly ok: boolean;
  readonly detail?: string;
}

export interface Store {
  space(namespace: StoreNamespace): KeyValueSpace;
  /**
   * Whether writes this process issues one after another (without waiting in between) are applied
   * in that order, so a later one is never kept without the earlier ones — one connection or one
   * transaction per batch (SQLite, Redis, memory). False where writes may overtake each other
   * (Postgres: a pool of connections): callers that need an order then wait for each write.
   */
  readonly writesInOrder: boolean;
  /** Whether the backend answers and, when it does not, why (for /readyz). */
  ping(): Promise<StoreHealth>;
  close(): Promise<void>;
  /** "sqlite:/path", "redis://host", … without credentials (for banners and logs). */
  readonly description: string;
}
