/**
 * createStore: opens the configured backend (embedded SQLite by default, Redis, Postgres or an
 * in-memory Map) and exposes it as the Store contract — one KeyValueSpace per namespace.
 */
import { mkdir } from "node:fs/promises";
import { type Backend, type ErrorSink, pingHealth } from "./backends/backend.js";
import { KeyedMutex } from "./key-mutex.js";
import { KeyvSpace } from "./keyv-space.js";
import {
  STORE_NAMESPACES,
  type KeyValueSpace,
  type Store,
  type StoreHealth,
  type StoreNamespace,
} from "./store.js";
import { describeStoreTarget, resolveStoreTarget, type StoreTarget } from "./store-url.js";

/** Where the store lives: COWORKER_STORE_URL and COWORKER_DATA_DIR, plus a sink for background errors. */
export interface CreateStoreOptions {
  /** COWORKER_STORE_URL: redis://, rediss://, postgres://, postgresql:// or memory:; unset → SQLite. */
  readonly url?: string | undefined;
  /** COWORKER_DATA_DIR: created when missing (0700: only the service's user may enter); holds the SQLite file. */
  readonly dataDir: string;
  /** Background errors no caller awaits (a dropped Redis connection); default: ignored. */
  readonly onError?: ErrorSink;
  /**
   * store_redis_prefix: on Redis, every key goes under `<keyPrefix>:`, so deployments sharing one
   * Redis keep apart (the coordination must get the same). Other backends ignore it.
   */
  readonly keyPrefix?: string | undefined;
}

/**
 * Open the store selected by `options.url`. Fails with a clear message for an unknown URL scheme
 * or an unreachable backend; the message and `description` never contain credentials.
 */
export async function createStore(options: CreateStoreOptions): Promise<Store> {
  const target = resolveStoreTarget(options.url, options.dataDir);
  const description = describeStoreTarget(target);
  // Owner-only when this creates it (conversations, audit records, logs live here); a folder the
  // operator made keeps the mode they gave it.
  await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
  const onError = options.onError ?? (() => undefined);
  const backend = await openBackend(target, description, onError, options.keyPrefix);
  return new KeyvStore(backend, description);
}

async function openBackend(
  target: StoreTarget,
  description: string,
  onError: ErrorSink,
  keyPrefix: string | undefined,
): Promise<Backend> {
  switch (target.kind) {
    case "memory":
      return (await import("./backends/memory.js")).openMemoryBackend(onError);
    case "sqlite":
      return (await import("./backends/sqlite.js")).openSqliteBackend(target.file, onError);
    case "redis":
      return (await import("./backends/redis.js")).openRedisBackend(
        target.url,
        description,
        onError,
        keyPrefix,
      );
    case "postgres":
      return (await import("./backends/postgres.js")).openPostgresBackend(target.url, description, onError);
  }
}

class KeyvStore implements Store {
  private closed = false;
  private readonly spaces: ReadonlyMap<StoreNamespace, KeyValueSpace>;
  /** Calls made and not yet settled: close() lets them finish first (unless the backend does: drainsOnClose). */
  private readonly inflight = new Set<Promise<unknown>>();

  constructor(
    private readonly backend: Backend,
    readonly description: string,
  ) {
    const context = {
      backend,
      mutex: new KeyedMutex(),
      assertOpen: () => {
        if (this.closed) throw new Error(`store ${description} is closed`);
      },
      // A promise per call to know when it settles, unless the backend's close waits for its calls.
      track: backend.drainsOnClose
        ? <T>(call: Promise<T>) => call
        : <T>(call: Promise<T>) => this.track(call),
    };
    this.spaces = new Map(STORE_NAMESPACES.map((ns) => [ns, new KeyvSpace(ns, context)] as const));
  }

  private track<T>(call: Promise<T>): Promise<T> {
    this.inflight.add(call);
    const forget = () => this.inflight.delete(call);
    call.then(forget, forget);
    return call;
  }

  get writesInOrder(): boolean {
    return this.backend.writesInOrder;
  }

  space(namespace: StoreNamespace): KeyValueSpace {
    const space = this.spaces.get(namespace);
    if (!space)
      throw new Error(`unknown store namespace "${namespace}"; known: ${STORE_NAMESPACES.join(", ")}`);
    return space;
  }

  async ping(): Promise<StoreHealth> {
    if (this.closed) return { ok: false, detail: `store ${this.description} is closed` };
    return pingHealth(this.backend.ping());
  }

  /** Refuse new calls, let every call already made finish, then close the backend. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
    await this.backend.close();
  }
}
