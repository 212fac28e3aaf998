/**
 * KeyvSpace: one namespace of the store as a KeyValueSpace — input checks, TTLs and a
 * write-if-absent that is atomic on Redis and serialised per key within this process elsewhere.
 */
import type { Backend } from "./backends/backend.js";
import { serializeEntry } from "./backends/backend.js";
import type { KeyedMutex } from "./key-mutex.js";
import type { KeyValueSpace, StoreNamespace } from "./store.js";

/** Longest key accepted: leaves room for the namespace prefix inside SQL's 255-character key column. */
export const MAX_KEY_LENGTH = 200;

/** Guards shared by every space of one store. */
export interface SpaceContext {
  readonly backend: Backend;
  readonly mutex: KeyedMutex;
  /** Throws when the store has been closed. */
  readonly assertOpen: () => void;
}

/** A namespaced key-value space over the backend's keyv instance for that namespace. */
export class KeyvSpace implements KeyValueSpace {
  constructor(
    private readonly namespace: StoreNamespace,
    private readonly context: SpaceContext,
  ) {}

  /** The stored value, or undefined when absent or expired. */
  async get<T>(key: string): Promise<T | undefined> {
    this.check(key);
    return (await this.context.backend.keyv(this.namespace).get(key)) as T | undefined;
  }

  /** Write (or overwrite) a value, optionally expiring after `ttlMs` milliseconds. */
  async set(key: string, value: unknown, ttlMs?: number): Promise<void> {
    this.check(key, value, ttlMs);
    const written = await this.context.backend.keyv(this.namespace).set(key, value, ttlMs);
    if (!written) throw new Error(`store: writing ${this.namespace}/${key} failed`);
  }

  /** Remove a key; true when it existed. */
  async delete(key: string): Promise<boolean> {
    this.check(key);
    return this.context.backend.keyv(this.namespace).delete(key);
  }

  /**
   * Write only when the key is absent (or expired); true when this call wrote it. Atomic across
   * processes on Redis; on SQLite, Postgres and memory it is atomic within this process only
   * (a per-key mutex over get + set), so running several processes on one store needs Redis.
   */
  async setIfAbsent(key: string, value: unknown, ttlMs?: number): Promise<boolean> {
    this.check(key, value, ttlMs);
    const { backend, mutex } = this.context;
    if (backend.insertIfAbsent) {
      const expires = ttlMs === undefined ? undefined : Date.now() + ttlMs;
      return backend.insertIfAbsent(this.namespace, key, serializeEntry({ value, expires }), ttlMs);
    }
    return mutex.run(`${this.namespace}\u0000${key}`, async () => {
      if ((await this.get(key)) !== undefined) return false;
      await this.set(key, value, ttlMs);
      return true;
    });
  }

  private check(key: string, ...write: [value: unknown, ttlMs: number | undefined] | []): void {
    this.context.assertOpen();
    if (typeof key !== "string" || key.length === 0 || key.length > MAX_KEY_LENGTH) {
      throw new Error(`store: key in ${this.namespace} must be a string of 1–${MAX_KEY_LENGTH} characters`);
    }
    if (write.length === 0) return;
    const [value, ttlMs] = write;
    if (value === undefined) {
      throw new Error(`store: cannot store undefined at ${this.namespace}/${key} (use delete)`);
    }
    if (ttlMs !== undefined && !(Number.isSafeInteger(ttlMs) && ttlMs > 0)) {
      throw new Error(
        `store: ttlMs for ${this.namespace}/${key} must be a positive whole number of milliseconds`,
      );
    }
  }
}
