/**
 * Redis backend: one node-redis connection shared by a @keyv/redis adapter per namespace (keys
 * are `<namespace>::<key>`, or `<prefix>:<namespace>::<key>` for a deployment with a key prefix;
 * TTLs are Redis expiries), and an atomic SET NX for `setIfAbsent` that holds across processes.
 */
import KeyvRedis, { createClient } from "@keyv/redis";
import { STORE_NAMESPACES, type StoreNamespace } from "../store.js";
import { REDIS_KEY_PREFIX_PATTERN } from "../store-url.js";
import { type Backend, type ErrorSink, namespacedKeyv } from "./backend.js";

/** How long the first connection may take before the store gives up. */
const CONNECT_TIMEOUT_MS = 5_000;
/** Longest pause between reconnect attempts after a connection drops. */
const MAX_RECONNECT_DELAY_MS = 2_000;
/**
 * How long Redis may take to answer before the link counts as stalled. A link whose peer stops
 * answering without closing (no RST: a stalled network, a frozen host) would otherwise leave
 * every call on it waiting for as long as TCP takes to give up, minutes; node-redis's own
 * command timeout only covers a command not yet sent.
 */
export const REPLY_TIMEOUT_MS = 5_000;
/** How often a watched connection checks that Redis answers (one PING at a time). */
const WATCH_INTERVAL_MS = 1_000;

/** Separator @keyv/redis puts between a namespace and a key. */
const KEY_SEPARATOR = "::";

/**
 * Where one deployment's keys live on a Redis shared with others: every key the store and the
 * coordination write, and every pub/sub channel (which Redis shares across its databases),
 * starts with `head` — `<prefix>:`, or nothing without a prefix (the layout before prefixes
 * existed, so data written then stays readable).
 */
export interface RedisKeyspace {
  readonly head: string;
}

/** The keyspace of a deployment with `prefix` (none → the unprefixed one); throws for a malformed prefix. */
export function redisKeyspace(prefix?: string): RedisKeyspace {
  if (prefix === undefined) return { head: "" };
  if (!REDIS_KEY_PREFIX_PATTERN.test(prefix)) {
    throw new Error(
      `the Redis key prefix "${prefix}" is not 1 to 64 letters, digits, "_" or "-" (store_redis_prefix)`,
    );
  }
  return { head: `${prefix}:` };
}

/** The keyv namespace (the part before "::") of `namespace` in `keyspace`. */
export function redisNamespace(keyspace: RedisKeyspace, namespace: StoreNamespace): string {
  return `${keyspace.head}${namespace}`;
}

/** The Redis key the store keeps `key` of `namespace` under (for scripts that write store keys). */
export function redisStoreKey(keyspace: RedisKeyspace, namespace: StoreNamespace, key: string): string {
  return `${redisNamespace(keyspace, namespace)}${KEY_SEPARATOR}${key}`;
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

/**
 * Keep a connected command client off a stalled link: every WATCH_INTERVAL_MS it sends a PING
 * (one at a time; queued behind the calls already sent, as Redis answers in order), and when one
 * goes unanswered for REPLY_TIMEOUT_MS — or a new connection is not ready within it — it drops
 * the connection, so every call waiting on it fails at once, and opens a new one. Calls are thus
 * answered or failed within about REPLY_TIMEOUT_MS + WATCH_INTERVAL_MS. Not for a subscriber
 * connection: that one is watched by a heartbeat published through the command connection
 * (coordination/subscriber-watch.ts), which checks that messages arrive, not only that it answers.
 * Returns the function that stops watching (before the client is closed).
 */
export function watchRedisLink(client: ReturnType<typeof newRedisClient>, onError: ErrorSink): () => void {
  let epoch = 0;
  /** When the PING now awaited was sent, or when the reconnect under way began. */
  let waitingSince: number | undefined;
  let reconnecting = false;
  let stopped = false;
  const restart = (why: string) => {
    onError(new Error(`Redis ${why} within ${REPLY_TIMEOUT_MS} ms: reconnecting`));
    const mine = ++epoch;
    waitingSince = Date.now();
    reconnecting = true;
    if (client.isOpen) client.destroy();
    client.connect().then(
      () => {
        if (mine !== epoch) return;
        reconnecting = false;
        waitingSince = undefined;
      },
      // Still reconnecting: the next tick past the deadline tries again.
      (error: unknown) => onError(error),
    );
  };
  const tick = () => {
    if (stopped) return;
    const now = Date.now();
    if (waitingSince !== undefined) {
      if (now - waitingSince >= REPLY_TIMEOUT_MS)
        restart(reconnecting ? "did not accept a new connection" : "did not answer");
      return;
    }
    // A dropped connection is node-redis's to reconnect; watch again once it is back.
    if (!client.isReady) return;
    const mine = epoch;
    waitingSince = now;
    const settle = () => {
      if (mine === epoch && !reconnecting) waitingSince = undefined;
    };
    client.ping().then(settle, settle);
  };
  const timer = setInterval(tick, WATCH_INTERVAL_MS);
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}

/** Close a client whether or not it is connected now (a reconnect may be under way). */
export async function closeRedisClient(client: ReturnType<typeof newRedisClient>): Promise<void> {
  if (!client.isOpen) return;
  if (client.isReady) await client.close();
  else client.destroy();
}

/**
 * Connect to Redis; throws a clear error (without credentials) when it cannot. `keyPrefix` puts
 * every key under `<keyPrefix>:` (see RedisKeyspace).
 */
export async function openRedisBackend(
  url: string,
  description: string,
  onError: ErrorSink,
  keyPrefix?: string,
): Promise<Backend> {
  const keyspace = redisKeyspace(keyPrefix);
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
  const stopWatching = watchRedisLink(client, onError);
  const adapters = new Map(
    STORE_NAMESPACES.map(
      (ns) =>
        [
          ns,
          new KeyvRedis<unknown>(client, {
            namespace: redisNamespace(keyspace, ns),
            keyPrefixSeparator: KEY_SEPARATOR,
            throwOnErrors: true,
          }),
        ] as const,
    ),
  );
  const spaces = new Map(
    STORE_NAMESPACES.map(
      (ns) => [ns, namespacedKeyv(adapters.get(ns)!, redisNamespace(keyspace, ns), false, onError)] as const,
    ),
  );
  return {
    keyv: (namespace: StoreNamespace) => spaces.get(namespace)!,
    // One connection: Redis runs its commands in the order they were sent.
    writesInOrder: true,
    insertIfAbsent: async (namespace, key, serialized, ttlMs) => {
      const redisKey = redisStoreKey(keyspace, namespace, key);
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
      stopWatching();
      await closeRedisClient(client);
    },
  };
}
