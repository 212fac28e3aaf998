/**
 * Postgres backend: one `pg` pool and one table (PostgresTable) shared by every namespace; keys
 * are `<namespace>:<key>`. `insertIfAbsent` is one conditional upsert, atomic across connections
 * and processes sharing the database; `setMany` is one statement. Expired rows are purged when the
 * store opens and hourly after that (reads never return them in between).
 */
import pg from "pg";
import { STORE_NAMESPACES, type StoreNamespace } from "../store.js";
import { type Backend, type ErrorSink, namespacedKeyv, PURGE_INTERVAL_MS } from "./backend.js";
import { PostgresTable } from "./postgres-table.js";

const TABLE = "public.keyv";

/** Connect to Postgres, create the table when missing and check it answers; throws a clear error when not. */
export async function openPostgresBackend(
  url: string,
  description: string,
  onError: ErrorSink,
): Promise<Backend> {
  const table = new PostgresTable(new pg.Pool({ connectionString: url }), TABLE);
  table.setMaxListeners(STORE_NAMESPACES.length + 4);
  table.on("error", onError);
  try {
    await table.ensureTable();
    await table.purgeExpired(Date.now());
  } catch (error) {
    await table.disconnect().catch(() => undefined);
    throw new Error(`cannot reach the Postgres store at ${description}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const spaces = new Map(
    STORE_NAMESPACES.map((ns) => [ns, namespacedKeyv(table, ns, true, onError)] as const),
  );
  const purgeTimer = setInterval(() => {
    table.purgeExpired(Date.now()).catch(onError);
  }, PURGE_INTERVAL_MS);
  purgeTimer.unref();
  return {
    keyv: (namespace: StoreNamespace) => spaces.get(namespace)!,
    // A pool: two writes in flight may commit on different connections in either order.
    writesInOrder: false,
    insertIfAbsent: (namespace, key, serialized) =>
      table.insertIfAbsent(spaces.get(namespace)!._getKeyPrefix(key), serialized, Date.now()),
    setMany: async (namespace, entries) => {
      await spaces
        .get(namespace)!
        .setMany(entries.map(({ key, value, ttlMs }) => ({ key, value, ...(ttlMs ? { ttl: ttlMs } : {}) })));
    },
    ping: async () => {
      await table.query("SELECT 1");
    },
    close: async () => {
      clearInterval(purgeTimer);
      await table.disconnect();
    },
  };
}
