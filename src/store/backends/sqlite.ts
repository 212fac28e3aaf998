/**
 * SQLite backend: the default embedded store, one file in the data dir through better-sqlite3.
 * All namespaces share one connection and one table (keys are `<namespace>:<key>`); writes are
 * group-committed once per event-loop turn (see SqliteAdapter). Expired rows are purged when the
 * store opens and hourly after that, a window of rows at a time between loop turns.
 *
 * Durability: the file runs in WAL mode with `synchronous = NORMAL`. Every commit is in the WAL
 * (the OS's hands) before the write resolves, so a process crash (SIGKILL, OOM, a thrown error)
 * loses nothing that was acknowledged. Only an OS crash or power loss can roll back the commits
 * made since the WAL was last synced (at each checkpoint) — the last moments of writes, never a
 * corrupt file. FULL would fsync on every commit, which costs one busy conversation most of its
 * speed and is not worth it for a chat service.
 */
import { STORE_NAMESPACES, type StoreNamespace } from "../store.js";
import {
  type Backend,
  type ErrorSink,
  namespacedKeyv,
  PURGE_INTERVAL_MS,
  serializeValue,
} from "./backend.js";
import { SqliteAdapter } from "./sqlite-adapter.js";
import { waitOutLock } from "./sqlite-lock-wait.js";

/** When SQLite syncs the WAL to disk (see the header). */
const SYNCHRONOUS = "NORMAL";
/** The journal and sync settings the file runs with, for reports. */
export const SQLITE_DURABILITY = `WAL, synchronous=${SYNCHRONOUS}`;
/**
 * How long a write, or opening the file, waits for another connection's lock before failing
 * (between loop turns, not on the main thread: see SqliteAdapter).
 */
const BUSY_TIMEOUT_MS = 10_000;
const TABLE = "keyv";

/** Open (creating if needed) the SQLite file and its table; throws a clear error when it cannot. */
export async function openSqliteBackend(file: string, onError: ErrorSink): Promise<Backend> {
  let adapter: SqliteAdapter | undefined;
  try {
    adapter = await waitOutLock(
      file,
      BUSY_TIMEOUT_MS,
      () =>
        new SqliteAdapter({
          file,
          table: TABLE,
          busyTimeoutMs: BUSY_TIMEOUT_MS,
          synchronous: SYNCHRONOUS,
          onCheckpointError: onError,
        }),
    );
    await adapter.purgeExpired();
  } catch (error) {
    await adapter?.disconnect().catch(() => undefined);
    throw new Error(`cannot open the SQLite store at ${file}: ${(error as Error).message}`, { cause: error });
  }
  adapter.setMaxListeners(STORE_NAMESPACES.length + 4);
  adapter.on("error", onError);
  const spaces = new Map(
    STORE_NAMESPACES.map((ns) => [ns, namespacedKeyv(adapter, ns, true, onError)] as const),
  );
  const purgeTimer = setInterval(() => adapter.purgeExpired().catch(onError), PURGE_INTERVAL_MS);
  purgeTimer.unref();
  return {
    keyv: (namespace: StoreNamespace) => spaces.get(namespace)!,
    rowTexts: (namespace, keys) => {
      const keyv = spaces.get(namespace)!;
      return adapter.getMany<string>(keys.map((key) => keyv._getKeyPrefix(key)));
    },
    // One connection: writes are applied in the order issued, a loop turn's batch in one transaction.
    writesInOrder: true,
    // Every call reaches the adapter's queue as it is made (keyv's delete too), and disconnect
    // commits what is queued before it closes the connection.
    drainsOnClose: true,
    // keyv's own prefixing, so the row written is exactly the one keyv reads back.
    insertIfAbsent: (namespace, key, serialized) =>
      adapter.insertIfAbsent(spaces.get(namespace)!._getKeyPrefix(key), serialized),
    replaceIf: (namespace, key, expected, serialized) =>
      adapter.replaceIf(spaces.get(namespace)!._getKeyPrefix(key), expected, serialized),
    deleteIf: (namespace, key, expected) =>
      adapter.deleteIf(spaces.get(namespace)!._getKeyPrefix(key), expected),
    // Rows in keyv's own format and key prefix (what its reads expect), handed to the adapter
    // directly: keyv's set would add its hooks, stats and several promises to every write.
    setMany: (namespace, entries) => {
      const keyv = spaces.get(namespace)!;
      const now = Date.now();
      return adapter.setMany(
        entries.map(({ key, value, ttlMs }) => ({
          key: keyv._getKeyPrefix(key),
          value: serializeValue(value, ttlMs, now),
        })),
      );
    },
    ping: async () => adapter.ping(),
    close: async () => {
      clearInterval(purgeTimer);
      await adapter.disconnect();
    },
  };
}
