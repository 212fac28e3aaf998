/**
 * SQLite backend: the default embedded store, one file in the data dir through @keyv/sqlite. All
 * namespaces share one connection and one table (keys are `<namespace>:<key>`); reads and writes
 * are group-committed (see GroupedSqliteAdapter). Expired rows are purged when the store opens
 * and hourly after that.
 *
 * Durability: the file runs in WAL mode with `synchronous = NORMAL`. Every commit is in the WAL
 * (the OS's hands) before the write resolves, so a process crash (SIGKILL, OOM, a thrown error)
 * loses nothing that was acknowledged. Only an OS crash or power loss can roll back the commits
 * made since the WAL was last synced (at each checkpoint) — the last moments of writes, never a
 * corrupt file. FULL would fsync on every commit: under load group commit hides most of that,
 * but one busy conversation runs at about half the speed (bench/stack-bench.ts), which is not
 * worth it for a chat service.
 */
import { STORE_NAMESPACES, type StoreNamespace } from "../store.js";
import { type Backend, type ErrorSink, namespacedKeyv, PURGE_INTERVAL_MS } from "./backend.js";
import { GroupedSqliteAdapter } from "./sqlite-adapter.js";

/** When SQLite syncs the WAL to disk (see the header). */
const SYNCHRONOUS = "NORMAL";
/** The journal and sync settings the file runs with, for reports. */
export const SQLITE_DURABILITY = `WAL, synchronous=${SYNCHRONOUS}`;
/** How long a write waits for another connection's lock before failing. */
const BUSY_TIMEOUT_MS = 5_000;
const TABLE = "keyv";

/** Open (creating if needed) the SQLite file and its table; throws a clear error when it cannot. */
export async function openSqliteBackend(file: string, onError: ErrorSink): Promise<Backend> {
  const adapter = new GroupedSqliteAdapter({
    uri: `sqlite://${file}`,
    table: TABLE,
    busyTimeout: BUSY_TIMEOUT_MS,
  });
  adapter.setMaxListeners(STORE_NAMESPACES.length + 4);
  adapter.on("error", onError);
  try {
    await adapter.query("PRAGMA journal_mode = WAL");
    await adapter.query(`PRAGMA synchronous = ${SYNCHRONOUS}`);
    await purgeExpired(adapter);
  } catch (error) {
    await adapter.disconnect().catch(() => undefined);
    throw new Error(`cannot open the SQLite store at ${file}: ${(error as Error).message}`, { cause: error });
  }
  const spaces = new Map(
    STORE_NAMESPACES.map((ns) => [ns, namespacedKeyv(adapter, ns, true, onError)] as const),
  );
  const purgeTimer = setInterval(() => {
    purgeExpired(adapter).catch(onError);
  }, PURGE_INTERVAL_MS);
  purgeTimer.unref();
  return {
    keyv: (namespace: StoreNamespace) => spaces.get(namespace)!,
    // keyv's own prefixing, so the row written is exactly the one keyv reads back.
    insertIfAbsent: (namespace, key, serialized) =>
      adapter.insertIfAbsent(spaces.get(namespace)!._getKeyPrefix(key), serialized),
    setMany: async (namespace, entries) => {
      await spaces
        .get(namespace)!
        .setMany(entries.map(({ key, value, ttlMs }) => ({ key, value, ...(ttlMs ? { ttl: ttlMs } : {}) })));
    },
    ping: async () => {
      await adapter.query("SELECT 1");
    },
    close: async () => {
      clearInterval(purgeTimer);
      await adapter.disconnect();
    },
  };
}

/** Delete every row whose keyv envelope says it has expired. */
async function purgeExpired(adapter: GroupedSqliteAdapter): Promise<void> {
  await adapter.query(
    `DELETE FROM ${TABLE} WHERE (CASE WHEN json_valid(value) THEN json_extract(value, '$.expires') END) < ?`,
    Date.now(),
  );
}
