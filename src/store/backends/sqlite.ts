/**
 * SQLite backend: the default embedded store, one file in the data dir through @keyv/sqlite. All
 * namespaces share one connection and one table (keys are `<namespace>:<key>`). The file runs in
 * WAL mode; expired rows are purged when the store opens and hourly after that.
 */
import { KeyvSqlite } from "@keyv/sqlite";
import { STORE_NAMESPACES, type StoreNamespace } from "../store.js";
import { type Backend, type ErrorSink, namespacedKeyv } from "./backend.js";

/** How long a write waits for another connection's lock before failing. */
const BUSY_TIMEOUT_MS = 5_000;
/** How often rows past their TTL are deleted (reads never return them in between). */
export const PURGE_INTERVAL_MS = 60 * 60 * 1_000;
const TABLE = "keyv";

/** Open (creating if needed) the SQLite file and its table; throws a clear error when it cannot. */
export async function openSqliteBackend(file: string, onError: ErrorSink): Promise<Backend> {
  const adapter = new KeyvSqlite({ uri: `sqlite://${file}`, table: TABLE, busyTimeout: BUSY_TIMEOUT_MS });
  adapter.setMaxListeners(STORE_NAMESPACES.length + 4);
  adapter.on("error", onError);
  try {
    await adapter.query("PRAGMA journal_mode = WAL");
    await adapter.query("PRAGMA synchronous = FULL");
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
async function purgeExpired(adapter: KeyvSqlite): Promise<void> {
  await adapter.query(
    `DELETE FROM ${TABLE} WHERE (CASE WHEN json_valid(value) THEN json_extract(value, '$.expires') END) < ?`,
    Date.now(),
  );
}
