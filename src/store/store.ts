/**
 * Store: the one storage layer, a set of namespaced key-value spaces on keyv. The backend is an
 * embedded SQLite file by default, or Redis / Postgres from COWORKER_STORE_URL.
 */

export const STORE_NAMESPACES = [
  "sessions",
  "history",
  "approvals",
  "questions",
  "grants",
  "dedupe",
  "journal",
  "subscriptions",
  "buffers",
  "memory",
] as const;
export type StoreNamespace = (typeof STORE_NAMESPACES)[number];

export interface KeyValueSpace {
  get<T>(key: string): Promise<T | undefined>;
  set(key: string, value: unknown, ttlMs?: number): Promise<void>;
  delete(key: string): Promise<boolean>;
  /** Write only when the key is absent; true when this call wrote it (dedupe, first press wins). */
  setIfAbsent(key: string, value: unknown, ttlMs?: number): Promise<boolean>;
}

export interface Store {
  space(namespace: StoreNamespace): KeyValueSpace;
  /** Whether the backend answers (for /readyz). */
  ping(): Promise<boolean>;
  close(): Promise<void>;
  /** "sqlite:/path", "redis://host", … without credentials (for banners and logs). */
  readonly description: string;
}
