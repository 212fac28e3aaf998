/**
 * Store URL: turns COWORKER_STORE_URL (or its absence) into the backend to open, and describes
 * that backend without credentials for banners and logs.
 */
import path from "node:path";

/** Which backend a store URL selects, with what it needs to open it. */
export type StoreTarget =
  | { readonly kind: "sqlite"; readonly file: string }
  | { readonly kind: "memory" }
  | { readonly kind: "redis"; readonly url: string }
  | { readonly kind: "postgres"; readonly url: string };

/** The file name of the embedded SQLite store inside the data dir. */
export const SQLITE_FILE_NAME = "coworker.sqlite";

/** Human-readable list of accepted store URLs, used in error messages and docs. */
export const SUPPORTED_STORE_URLS =
  "redis://…, rediss://…, postgres://…, postgresql://…, memory: — or no URL for the embedded SQLite file in the data dir";

/**
 * What a deployment's Redis key prefix may look like (`store_redis_prefix`). No ":" in it, so a
 * prefix ends at the first ":" of a key and one deployment's keys never fall under another's
 * (with `a` and `a:sessions`, keyv's scans of `a:sessions::*` would reach both).
 */
export const REDIS_KEY_PREFIX_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

const SCHEMES: Record<string, "memory" | "redis" | "postgres"> = {
  "memory:": "memory",
  "redis:": "redis",
  "rediss:": "redis",
  "postgres:": "postgres",
  "postgresql:": "postgres",
};

/**
 * Pick the backend for a store URL. No URL (or a blank one) means the embedded SQLite file
 * `<dataDir>/coworker.sqlite`. Throws a message listing the supported schemes for anything else;
 * the message never repeats the URL itself, which may hold a password.
 */
export function resolveStoreTarget(url: string | undefined, dataDir: string): StoreTarget {
  const trimmed = url?.trim() ?? "";
  if (trimmed === "") return { kind: "sqlite", file: path.resolve(dataDir, SQLITE_FILE_NAME) };
  const scheme = /^([a-z][a-z0-9+.-]*:)/i.exec(trimmed)?.[1]?.toLowerCase();
  if (scheme === undefined) {
    throw new Error(`store URL has no scheme; supported: ${SUPPORTED_STORE_URLS}`);
  }
  const kind = SCHEMES[scheme];
  if (kind === undefined) {
    throw new Error(`unsupported store URL scheme "${scheme}"; supported: ${SUPPORTED_STORE_URLS}`);
  }
  if (kind === "memory") return { kind: "memory" };
  if (!URL.canParse(trimmed)) {
    throw new Error(
      `store URL with scheme "${scheme}" is not a valid URL (expected e.g. ${scheme}//host:port/…)`,
    );
  }
  return { kind, url: trimmed };
}

/** "sqlite:/abs/file", "redis://host:6379/0", "postgres://host/db", "memory:" — never credentials or query options. */
export function describeStoreTarget(target: StoreTarget): string {
  switch (target.kind) {
    case "sqlite":
      return `sqlite:${target.file}`;
    case "memory":
      return "memory:";
    case "redis":
    case "postgres": {
      const url = new URL(target.url);
      const port = url.port === "" ? "" : `:${url.port}`;
      return `${url.protocol}//${url.hostname}${port}${url.pathname === "/" ? "" : url.pathname}`;
    }
  }
}
