/**
 * Store failures as ServiceFailures: a Redis or Postgres server that cannot be reached, one that
 * refuses the credentials, a Postgres table another client holds locked past the store's lock or
 * statement timeout, a SQLite file another program holds locked past the store's wait, and a store
 * that is misconfigured (unknown URL scheme, a data directory that cannot be written, a SQLite
 * driver that was not built) — each with its fix.
 */
import { messageOf, networkCode, ServiceFailure } from "../core/failure.js";
import { isLockedCode } from "./backends/sqlite-lock-wait.js";

const AUTH = /WRONGPASS|NOAUTH|invalid password|password authentication failed|28P01|no pg_hba\.conf entry/i;
/** Postgres's lock_not_available (lock_timeout) and query_canceled (statement_timeout). */
const HELD_BY_ANOTHER_CLIENT = new Set(["55P03", "57014"]);
const FILESYSTEM = new Set([
  "EACCES",
  "EPERM",
  "EROFS",
  "ENOSPC",
  "ENOTDIR",
  "SQLITE_CANTOPEN",
  "SQLITE_READONLY",
]);

function codesOf(error: unknown): string[] {
  const codes: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const code = (current as Error & { code?: unknown }).code;
    if (typeof code === "string") codes.push(code);
    current = (current as Error & { cause?: unknown }).cause;
  }
  return codes;
}

/** Classify a failure to open the store; `external` when COWORKER_STORE_URL names a server. */
export function storeFailure(error: unknown, external: boolean, dataDir: string): ServiceFailure {
  if (error instanceof ServiceFailure) return error;
  const reason = messageOf(error);
  const cause = { cause: error };
  const codes = codesOf(error);
  if (AUTH.test(reason) || codes.includes("28P01"))
    return new ServiceFailure(
      "the store",
      "rejected",
      reason,
      "correct the user and password in COWORKER_STORE_URL",
      cause,
    );
  // Retryable like an unreachable server (the lock goes when its transaction ends), but the fix is
  // elsewhere: "start the server" would send an operator the wrong way.
  if (codes.some((code) => HELD_BY_ANOTHER_CLIENT.has(code)))
    return new ServiceFailure(
      "the store",
      "unreachable",
      reason,
      "another client holds a lock on the store's table (a migration, a maintenance job, a second program): end that transaction; start retries meanwhile",
      cause,
    );
  if (
    external &&
    (networkCode(error) !== undefined || /cannot connect|connect(ion)? refused|timed? ?out/i.test(reason))
  )
    return new ServiceFailure(
      "the store",
      "unreachable",
      reason,
      "start the Redis / Postgres server or correct the host and port in COWORKER_STORE_URL",
      cause,
    );
  // Retryable too: the file is fine, another program holds it.
  if (codes.some(isLockedCode))
    return new ServiceFailure(
      "the store",
      "unreachable",
      reason,
      `another program holds the SQLite file in ${dataDir} locked (a sqlite3 shell, a backup tool, a Coworker process on the same data directory): end it; start retries meanwhile`,
      cause,
    );
  if (codes.some((code) => FILESYSTEM.has(code)))
    return new ServiceFailure(
      "the store",
      "misconfigured",
      reason,
      `make ${dataDir} writable for this user, or set COWORKER_DATA_DIR to a directory that is`,
      cause,
    );
  if (/bindings|\.node\b|NODE_MODULE_VERSION|invalid ELF/i.test(reason))
    return new ServiceFailure(
      "the store",
      "misconfigured",
      "the SQLite driver is not built for this Node.js",
      "run `npm rebuild` (it needs python3, make and g++), or use COWORKER_STORE_URL=redis://…",
      cause,
    );
  return new ServiceFailure(
    "the store",
    external ? "unreachable" : "misconfigured",
    reason,
    external
      ? "check COWORKER_STORE_URL and that the server is up"
      : `check ${dataDir} (or set COWORKER_DATA_DIR)`,
    cause,
  );
}
