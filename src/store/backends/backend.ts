/**
 * Backend: what each storage engine (SQLite, Redis, Postgres, memory) hands the store — one keyv
 * instance per namespace, its rows' texts read straight from the engine, an optional atomic
 * insert, a compare-and-set and a compare-and-delete, a health probe and a close.
 */
import { type DeserializedData, Keyv, type KeyvOptions, type KeyvStoreAdapter } from "keyv";
import { messageOf } from "../../core/failure.js";
import { settlesWithin } from "../../core/settles-within.js";
import { JsonText } from "../json-text.js";
import type { SpaceEntry, StoreHealth, StoreNamespace } from "../store.js";
import { RowText, type UnreadableReason } from "../stored-row.js";

/** One opened storage engine. */
export interface Backend {
  /** The keyv instance holding this namespace's keys. */
  keyv(namespace: StoreNamespace): Keyv;
  /**
   * The texts of the rows keyv keeps `keys` of `namespace` in, in order (undefined or null where
   * absent), in one call to the engine: the store reads them as keyv would (`readEntry`) without
   * keyv's hooks, statistics and promise per row, as `setMany` writes them without keyv.
   */
  rowTexts(
    namespace: StoreNamespace,
    keys: readonly string[],
  ): Promise<ReadonlyArray<string | null | undefined>>;
  /**
   * Atomic write-if-absent across processes, when the engine has one (Redis SET NX). Backends
   * without it get the store's in-process get-then-set under a per-key mutex.
   */
  insertIfAbsent?(
    namespace: StoreNamespace,
    key: string,
    serialized: string,
    ttlMs?: number,
  ): Promise<boolean>;
  /**
   * Write several entries of one namespace as one unit, when the engine can: all are committed
   * or none (SQLite: one statement). Backends without it get ordered one-by-one writes.
   */
  setMany?(namespace: StoreNamespace, entries: readonly SpaceEntry[]): Promise<void>;
  /**
   * Write `serialized` (as `serializeValue` makes it, expiring after `ttlMs` when given) at `key`
   * only while the row holds the entry `expected` describes, live (see `holdsExpected`),
   * atomically across processes; true when this call wrote it.
   */
  replaceIf(
    namespace: StoreNamespace,
    key: string,
    expected: ExpectedEntry,
    serialized: string,
    ttlMs: number | undefined,
  ): Promise<boolean>;
  /**
   * Delete `key` only while its row holds the entry `expected` describes, live (see
   * `holdsExpected`), atomically across processes; true when this call deleted it.
   */
  deleteIf(namespace: StoreNamespace, key: string, expected: ExpectedEntry): Promise<boolean>;
  /** Whether writes issued one after another are applied in that order (see Store.writesInOrder). */
  readonly writesInOrder: boolean;
  /**
   * Whether `close()` itself lets every call made before it finish (each call is queued by the
   * engine as it is made, and closing drains the queue), so the store need not track its calls.
   */
  readonly drainsOnClose?: boolean;
  /** One real round trip to the engine; throws when it does not answer. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * How long a server backend (Redis, Postgres) may take to answer a call before it fails. A link
 * whose peer stops answering without closing (no RST: a stalled network, a frozen host) would
 * otherwise leave every call on it waiting for as long as TCP takes to give up, minutes.
 */
export const REPLY_TIMEOUT_MS = 5_000;

/** How long a health ping (the store's, the coordination's) waits for an answer before reporting unhealthy. */
export const PING_TIMEOUT_MS = 2_000;

/** The health `ping` shows: ok when it succeeds within PING_TIMEOUT_MS, else why not (its error, or no answer). */
export async function pingHealth(ping: Promise<unknown>): Promise<StoreHealth> {
  try {
    return (await settlesWithin(ping, PING_TIMEOUT_MS))
      ? { ok: true }
      : { ok: false, detail: `no answer within ${PING_TIMEOUT_MS} ms` };
  } catch (error) {
    return { ok: false, detail: messageOf(error) };
  }
}

/** How often backends without native expiry delete rows past their TTL (reads never return them in between). */
export const PURGE_INTERVAL_MS = 60 * 60 * 1_000;

/** Reports background errors (lost connections, failed reconnects) that no caller is awaiting. */
export type ErrorSink = (error: unknown) => void;

/**
 * Serialise an entry exactly as the store's keyv instances do (plain JSON: values must be
 * JSON-compatible, or a JsonText, whose text is the value's JSON), so an atomic insert writes
 * what a later `get` reads.
 */
export function serializeEntry(entry: DeserializedData<unknown>): string {
  const { value, expires } = entry;
  if (!(value instanceof JsonText)) return JSON.stringify(entry);
  return expires === undefined
    ? `{"value":${value.text}}`
    : `{"value":${value.text},"expires":${JSON.stringify(expires)}}`;
}

/** `value` serialised as keyv stores it, expiring `ttlMs` after `now` when a TTL is given. */
export function serializeValue(value: unknown, ttlMs: number | undefined, now: number): string {
  return serializeEntry({ value, expires: ttlMs === undefined ? undefined : now + ttlMs });
}

/**
 * What a compare-and-set (or compare-and-delete) expects a row to hold: a value as stored without an expiry (`exact`,
 * `{"value":…}`), or as stored with one (`expiringStart`, `{"value":…,"expires":`, then the expiry
 * and `}`) not yet passed at `now`, the caller's clock (the one reads judge expiry by). The value
 * is compared as text: JSON gives back the same text for a value read from it. A value is
 * complete before the comma, so a row beginning with `expiringStart` holds that value and no other.
 * An empty `expiringStart` expects `exact` alone: a row's own text, handed back (see expectedText).
 */
export interface ExpectedEntry {
  readonly exact: string;
  readonly expiringStart: string;
  readonly now: number;
}

/** The entry a compare-and-set or compare-and-delete of `value` at `now` expects (see ExpectedEntry). */
export function expectedEntry(value: unknown, now: number): ExpectedEntry {
  const exact = serializeValue(value, undefined, now);
  return { exact, expiringStart: `${exact.slice(0, -1)},"expires":`, now };
}

/**
 * The entry a compare-and-set or compare-and-delete of a row's exact text at `now` expects: that
 * text and no other; undefined when its expiry, as the read judged it, has passed at `now` (the row
 * is absent to this caller then, so nothing matches).
 */
export function expectedText(row: RowText, now: number): ExpectedEntry | undefined {
  if (row.expires !== undefined && now > row.expires) return undefined;
  return { exact: row.text, expiringStart: "", now };
}

/** Whether a row (keyv's serialised text, or undefined when absent) holds the entry `expected` describes, live. */
export function holdsExpected(row: unknown, expected: ExpectedEntry): boolean {
  if (row === expected.exact) return true;
  const start = expected.expiringStart;
  if (start === "" || typeof row !== "string" || !row.startsWith(start) || !row.endsWith("}")) return false;
  const expires = Number(row.slice(start.length, -1));
  return Number.isFinite(expires) && expires >= expected.now;
}

/** Where a read entry keeps the text of its row (a symbol: no stored field can collide with it). */
export const ROW_TEXT = Symbol("row text");

/** An entry as reads give it: keyv's envelope, and the text of the row it was read from. */
export type ReadEntry<T = unknown> = DeserializedData<T> & { readonly [ROW_TEXT]: string };

/**
 * What a read gives as the value of a row it holds no value in (not JSON, or JSON that is not an
 * entry with a value): the store turns it into an UnreadableRow naming the key (stored-row.ts).
 */
export class UnreadableValue {
  constructor(
    readonly reason: UnreadableReason,
    readonly row: RowText,
  ) {}
}

/**
 * A stored entry, with its row's text, or undefined once it has expired: keyv then reports a miss
 * and leaves the row alone. Left to keyv, a read that found an entry expired deleted its key, and
 * that delete could land after a write of the key made meanwhile (a renewal, a setIfAbsent that
 * won), removing it. Expired rows are purged by their backend instead (SQLite and Postgres hourly,
 * Redis by itself; the in-memory one, for tests, keeps them). A row that is not JSON, or JSON that
 * holds no value (`null`, `{"v":1}`), is an entry whose value is an UnreadableValue: it never
 * throws here, so a batched read answers for every other key (keyv hands a deserializer the text
 * alone, so the store names the key), and it counts as present, as a write-if-absent finds it.
 */
function deserializeEntry<T>(text: string): ReadEntry<T> | undefined {
  let entry: unknown;
  try {
    entry = JSON.parse(text);
  } catch {
    return unreadableEntry(text, "is not JSON", undefined);
  }
  if (typeof entry !== "object" || entry === null || Array.isArray(entry))
    return unreadableEntry(text, "holds no value", undefined);
  const { expires } = entry as { expires?: unknown };
  if (typeof expires === "number" && Date.now() > expires) return undefined;
  if (!("value" in entry)) return unreadableEntry(text, "holds no value", expires);
  const read = entry as { value: T; expires?: number; [ROW_TEXT]: string };
  read[ROW_TEXT] = text;
  return read;
}

/** The entry a row's text (undefined or null: no row) holds, as keyv's reads give it (see deserializeEntry). */
export function readEntry<T>(row: string | null | undefined): ReadEntry<T> | undefined {
  return typeof row === "string" ? deserializeEntry<T>(row) : undefined;
}

/** The entry of a row holding no value: an UnreadableValue, live (an expiry passed was judged already). */
function unreadableEntry<T>(text: string, reason: UnreadableReason, expires: unknown): ReadEntry<T> {
  const expiry = typeof expires === "number" ? expires : undefined;
  const value = new UnreadableValue(reason, new RowText(text, expiry));
  // keyv hands the value on as the caller's: the store tells it apart (keyv-space.ts).
  return { value: value as T, expires: expiry, [ROW_TEXT]: text };
}

/**
 * Keyv with every key stored as `<namespace>:<key>`: keyv's own prefixing leaves a key that
 * already begins with `<namespace>:` as it is (so "x" and "sessions:x" named one row) while its
 * getMany prefixes every key (so it missed what `set` wrote under such a key).
 */
class PrefixedKeyv extends Keyv {
  private readonly prefix: string;

  constructor(options: KeyvOptions, namespace: string) {
    super(options);
    this.prefix = `${namespace}:`;
  }

  override _getKeyPrefix(key: string): string {
    return this.prefix + key;
  }

  /**
   * Refused: this keyv shares its adapter (one SQLite table, one Postgres table, one Map) with
   * every other namespace, and an adapter's clear cannot tell whose rows are whose (keyv writes
   * each namespace's name into the adapter's one `namespace` field, the last one made wins), so it
   * deleted another namespace's rows, or every namespace's. Nothing in the store clears a namespace.
   */
  override async clear(): Promise<void> {
    throw new SharedAdapterClearError(this.prefix.slice(0, -1));
  }
}

/** Thrown by `clear()` on an adapter (or its keyv) shared across namespaces: see PrefixedKeyv.clear. */
export class SharedAdapterClearError extends Error {
  override readonly name = "SharedAdapterClearError";

  constructor(namespace?: string) {
    super(
      `store: cannot clear ${namespace === undefined ? "a namespace" : `namespace ${namespace}`}: ` +
        "its rows share one table with every other namespace, and clearing would delete theirs too",
    );
  }
}

/**
 * A keyv instance over `store` for one namespace. `prefixKeys: false` when the adapter prefixes
 * keys itself (Redis); otherwise keyv writes `<namespace>:<key>`, which lets several namespaces
 * share one adapter (one SQLite connection, one table). keyv hands `namespace` to the adapter, so
 * it is the adapter's own (Redis: with the deployment's key prefix). Errors are thrown to the
 * caller rather than swallowed, so a failed write is never mistaken for success.
 */
export function namespacedKeyv(
  store: KeyvStoreAdapter | Map<string, unknown>,
  namespace: string,
  prefixKeys: boolean,
  onError: ErrorSink,
): Keyv {
  const options: KeyvOptions = {
    store,
    namespace,
    useKeyPrefix: prefixKeys,
    throwOnErrors: true,
    serialize: serializeEntry,
    deserialize: deserializeEntry,
  };
  const keyv = prefixKeys ? new PrefixedKeyv(options, namespace) : new Keyv(options);
  keyv.on("error", onError);
  return keyv;
}
