/**
 * Redis backend: one node-redis connection shared by a @keyv/redis adapter per namespace (keys
 * are `<namespace>::<key>`, TTLs are Redis expiries), and an atomic SET NX for `setIfAbsent`
 * that holds across processes.
 */
import KeyvRedis, { createClient } from "@keyv/redis";
import { STORE_NAMESPACES, type StoreNamespace } from "../store.js";
import { type Backend, type ErrorSink, namespacedKeyv } from "./backend.js";

/** How long the first connection may take before the store gives up. */
const CONNECT_TIMEOUT_MS = 5_000;
/** Longest pause between reconnect attempts after a connection drops. */
const MAX_RECONNECT_DELAY_MS = 2_000;

/** Separator @keyv/redis puts between a namespace and a key. */
const KEY_SEPARATOR = "::";

/** The Redis key the store keeps `key` of `namespace` under (for scripts that write store keys). */
export function redisStoreKey(namespace: StoreNamespace, key: string): string {
  return `${namespace}${KEY_SEPARATOR}${key}`;
}

/**
 * A node-redis client that, while Redis is unreachable, fails commands at once instead of
 * queueing them behind a reconnect; it gives up on a first connection that fails (the caller
 * reports it) and, once `connected()`, keeps reconnecting. Errors go to `onError`.
 */
export function newRedisClient(url: string, onError: ErrorSink, connected: () => boolean) {
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: CONNECT_TIMEOUT_MS,
      reconnectStrategy: (retries, cause) =>
        connected() ? Math.min(100 * 2 ** retries, MAX_RECONNECT_DELAY_MS) : cause,
    },
  });
  client.on("error", onError);
  return client;
}

/** Connect to Redis; throws a clear error (without credentials) when it cannot. */
export async function openRedisBackend(
  url: string,
  description: string,
  onError: ErrorSink,
): Promise<Backend> {
  let connected = false;
  const client = newRedisClient(url, onError, () => connected);
  client.setMaxListeners(STORE_NAMESPACES.length + 4);
  try {
    await client.connect();
    connected = true;
  } catch (error) {
    if (client.isOpen) client.destroy();
    throw new Error(`cannot connect to the Redis store at ${description}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const adapters = new Map(
    STORE_NAMESPACES.map(
      (ns) =>
        [
          ns,
          new KeyvRedis<unknown>(client, {
            namespace: ns,
            keyPrefixSeparator: KEY_SEPARATOR,
            throwOnErrors: true,
          }),
        ] as const,
    ),
  );
  const spaces = new Map(
    STORE_NAMESPACES.map((ns) => [ns, namespacedKeyv(adapters.get(ns)!, ns, false, onError)] as const),
  );
  return {
    keyv: (namespace: StoreNamespace) => spaces.get(namespace)!,
    // One connection: Redis runs its commands in the order they were sent.
    writesInOrder: true,
    insertIfAbsent: async (namespace, key, serialized, ttlMs) => {
      const redisKey = redisStoreKey(namespace, key);
      const reply = await client.set(redisKey, serialized, {
        condition: "NX",
        ...(ttlMs === undefined ? {} : { expiration: { type: "PX", value: ttlMs } as const }),
      });
      return reply === "OK";
    },
    ping: async () => {
      await client.ping();
    },
    close: async () => {
      if (client.isOpen) await client.close();
    },
  };
}
