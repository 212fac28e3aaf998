/**
 * Redis backend: one node-redis connection shared by a @keyv/redis adapter per namespace (keys
 * are `<namespace>::<key>`, or `<prefix>:<namespace>::<key>` for a deployment with a key prefix;
 * TTLs are Redis expiries), and atomic scripts for `setIfAbsent`, `replaceIf` and `deleteIf` that hold
 * across processes.
 */
import KeyvRedis, { createClient } from "@keyv/redis";
import { backoffMs } from "../../core/backoff.js";
import { STORE_NAMESPACES, type StoreNamespace } from "../store.js";
import { REDIS_KEY_PREFIX_PATTERN } from "../store-url.js";
import { type Backend, type ErrorSink, namespacedKeyv, REPLY_TIMEOUT_MS } from "./backend.js";
import { DELETE_IF_LUA, INSERT_IF_ABSENT_LUA, REPLACE_IF_LUA } from "./redis-live-entry.js";
import { RedisRestart } from "./redis-restart.js";

/** How long the first connection may take before the store gives up. */
const CONNECT_TIMEOUT_MS = 5_000;
/** Longest pause between reconnect attempts after a connection drops. */
const MAX_RECONNECT_DELAY_MS = 2_000;
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
function redisNamespace(keyspace: RedisKeyspace, namespace: StoreNamespace): string {
  return `${keyspace.head}${namespace}`;
}

/** The Redis key the store keeps `key` of `namespace` under (for scripts that write store keys). */
export function redisStoreKey(keyspace: RedisKeyspace, namespace: StoreNamespace, key: string): string {
  return `${redisNamespace(keyspace, namespace)}${KEY_SEPARATOR}${key}`;
}

/** A node-redis client with the options every connection here has; `retry` is its reconnect strategy. */
function createRedisClient(url: string, retry: (retries: number, cause: Error) => number | Error) {
  return createClient({
    url,
    disableOfflineQueue: true,
    socket: { connectTimeout: CONNECT_TIMEOUT_MS, reconnectStrategy: retry },
  });
}

/** A node-redis client as newRedisClient makes it. */
export type RedisClient = ReturnType<typeof createRedisClient>;

/** A client and its restart routine (redis-restart.ts), wired to each other. */
export interface RedisConnection {
  readonly client: RedisClient;
  readonly restart: RedisRestart;
}

/**
 * A node-redis client that, while Redis is unreachable, fails commands at once instead of
 * queueing them behind a reconnect; it gives up on a first connection that fails (the caller
 * reports it) and, once `connected()`, keeps reconnecting — except while its restart routine drops
 * the connection, whose errors are not reported either. Other errors go to `onError`.
 */
export function newRedisClient(url: string, onError: ErrorSink, connected: () => boolean): RedisConnection {
  const client = createRedisClient(url, (retries, cause) =>
    connected() && !restart.dropping ? backoffMs(retries, 100, MAX_RECONNECT_DELAY_MS) : cause,
  );
  const restart = new RedisRestart(client, onError);
  client.on("error", (error: unknown) => {
    if (!restart.dropping) onError(error);
  });
  return { client, restart };
}

/**
 * Keep a connected command client off a stalled link: every WATCH_INTERVAL_MS it sends a PING
 * (one at a time; queued behind the calls already sent, as Redis answers in order), and when one
 * goes unanswered for REPLY_TIMEOUT_MS — or a new connection is not ready within it — it drops
 * the connection, so every call waiting on it fails at once, and opens a new one (the client's
 * restart routine, which leaves alone a connection still opening its socket or waiting to retry:
 * node-redis's connect timeout and retries end those). Calls are thus answered or failed within
 * about REPLY_TIMEOUT_MS + WATCH_INTERVAL_MS. Not for a subscriber connection: that one is watched
 * by a heartbeat published through the command connection (coordination/subscriber-watch.ts),
 * which checks that messages arrive, not only that it answers. Returns the function that stops
 * watching (before the client is closed).
 */
export function watchRedisLink({ client, restart }: RedisConnection, onError: ErrorSink): () => void {
  let epoch = 0;
  /** When the PING now awaited was sent, or when the connection was last dropped. */
  let waitingSince: number | undefined;
  let reconnecting = false;
  let stopped = false;
  const tick = () => {
    if (stopped || restart.dropping) return;
    const now = Date.now();
    if (reconnecting && client.isReady) {
      reconnecting = false;
      waitingSince = undefined;
    }
    if (waitingSince !== undefined) {
      if (now - waitingSince >= REPLY_TIMEOUT_MS && restart.restart()) {
        const why = reconnecting ? "did not accept a new connection" : "did not answer";
        onError(new Error(`Redis ${why} within ${REPLY_TIMEOUT_MS} ms: reconnecting`));
        epoch++;
        waitingSince = now;
        reconnecting = true;
      }
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
    restart.stop();
    clearInterval(timer);
  };
}

/** Close a client whether or not it is connected now (a reconnect may be under way). */
export async function closeRedisClient(client: RedisClient): Promise<void> {
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
  const connection = newRedisClient(url, onError, () => connected);
  const { client } = connection;
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
  const stopWatching = watchRedisLink(connection, onError);
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
  // The adapters report nothing: each passes the shared client's errors on (keyv re-emits its
  // store's), which the client's own listener (newRedisClient) reports once already; every other
  // error of theirs or keyv's is thrown to the caller (throwOnErrors).
  const adapterErrors: ErrorSink = () => undefined;
  const spaces = new Map(
    STORE_NAMESPACES.map(
      (ns) =>
        [ns, namespacedKeyv(adapters.get(ns)!, redisNamespace(keyspace, ns), false, adapterErrors)] as const,
    ),
  );
  return {
    keyv: (namespace: StoreNamespace) => spaces.get(namespace)!,
    // The keys @keyv/redis reads, in one MGET.
    rowTexts: (namespace, keys) => client.mGet(keys.map((key) => redisStoreKey(keyspace, namespace, key))),
    // One connection: Redis runs its commands in the order they were sent.
    writesInOrder: true,
    insertIfAbsent: async (namespace, key, serialized, ttlMs) => {
      const reply = await client.eval(INSERT_IF_ABSENT_LUA, {
        keys: [redisStoreKey(keyspace, namespace, key)],
        arguments: [serialized, ttlMs === undefined ? "" : String(ttlMs), String(Date.now())],
      });
      return reply === 1;
    },
    replaceIf: async (namespace, key, expected, serialized, ttlMs) => {
      const reply = await client.eval(REPLACE_IF_LUA, {
        keys: [redisStoreKey(keyspace, namespace, key)],
        arguments: [
          expected.exact,
          expected.expiringStart,
          String(expected.now),
          serialized,
          ttlMs === undefined ? "" : String(ttlMs),
        ],
      });
      return reply === 1;
    },
    deleteIf: async (namespace, key, expected) => {
      const reply = await client.eval(DELETE_IF_LUA, {
        keys: [redisStoreKey(keyspace, namespace, key)],
        arguments: [expected.exact, expected.expiringStart, String(expected.now)],
      });
      return reply === 1;
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
