/**
 * Postgres backend: one `pg` pool and one table (PostgresTable) shared by every namespace; keys
 * are `<namespace>:<key>`. `insertIfAbsent` is one conditional upsert, `replaceIf` one
 * conditional update and `deleteIf` one conditional delete, atomic across connections and processes sharing the database; `setMany` is
 * one statement. Expired rows are purged when the
 * store opens and hourly after that (reads never return them in between), a window of rows per
 * statement: opening waits for the first window only, the rest follow in the background. Every
 * call is bounded in time (see boundedPool): a stalled link, a lock held by another
 * client of the database or an exhausted pool fails calls rather than hanging them.
 */
import { STORE_NAMESPACES, type StoreNamespace } from "../store.js";
import { type Backend, type ErrorSink, namespacedKeyv, PURGE_INTERVAL_MS } from "./backend.js";
import { boundedPool } from "./postgres-pool.js";
import { PostgresCallError, PostgresTable, type PurgeRun } from "./postgres-table.js";

const TABLE = "public.keyv";

/** Connect to Postgres, create the table when missing and check it answers; throws a clear error when not. */
export async function openPostgresBackend(
  url: string,
  description: string,
  onError: ErrorSink,
): Promise<Backend> {
  const table = new PostgresTable(boundedPool(url), TABLE, description);
  table.setMaxListeners(STORE_NAMESPACES.length + 4);
  table.on("error", onError);
  let purge: PurgeRun;
  try {
    await table.ensureTable();
    // The first window: a table that cannot be written fails the open; the rest follow below.
    purge = await table.startPurge(Date.now());
  } catch (error) {
    await table.disconnect().catch(() => undefined);
    const reason = error instanceof PostgresCallError ? error.reason : (error as Error).message;
    throw new Error(`cannot reach the Postgres store at ${description}: ${reason}`, { cause: error });
  }
  purge.rest.catch(onError);
  const spaces = new Map(
    STORE_NAMESPACES.map((ns) => [ns, namespacedKeyv(table, ns, true, onError)] as const),
  );
  const purgeTimer = setInterval(() => {
    table
      .startPurge(Date.now())
      .then((run) => run.rest)
      .catch(onError);
  }, PURGE_INTERVAL_MS);
  purgeTimer.unref();
  return {
    keyv: (namespace: StoreNamespace) => spaces.get(namespace)!,
    // The value column's texts (keyv's adapter type allows more than a text column holds).
    rowTexts: (namespace, keys) => {
      const keyv = spaces.get(namespace)!;
      return table.getMany(keys.map((key) => keyv._getKeyPrefix(key))) as Promise<Array<string | undefined>>;
    },
    // A pool: two writes in flight may commit on different connections in either order.
    writesInOrder: false,
    insertIfAbsent: (namespace, key, serialized) =>
      table.insertIfAbsent(spaces.get(namespace)!._getKeyPrefix(key), serialized, Date.now()),
    replaceIf: (namespace, key, expected, serialized) =>
      table.replaceIf(spaces.get(namespace)!._getKeyPrefix(key), expected, serialized),
    deleteIf: (namespace, key, expected) =>
      table.deleteIf(spaces.get(namespace)!._getKeyPrefix(key), expected),
    setMany: async (namespace, entries) => {
      await spaces
        .get(namespace)!
        .setMany(entries.map(({ key, value, ttlMs }) => ({ key, value, ...(ttlMs ? { ttl: ttlMs } : {}) })));
    },
    ping: () => table.ping(),
    close: async () => {
      clearInterval(purgeTimer);
      await table.disconnect();
    },
  };
}
