/**
 * The SQLite store's single-process lock: an exclusive SQLite lock on a lock database of its own
 * (`coworker.lock` beside `coworker.sqlite`), taken with BEGIN EXCLUSIVE on a connection kept open
 * for the life of the process and never committed.
 *
 * Why this and not a pid file: SQLite's lock is a POSIX advisory lock on the file, which the
 * kernel drops the moment the process holding it ends, however it ends (SIGKILL, OOM kill, a crash):
 * there is never a stale lock to judge, and a pid reused by an unrelated process after a crash
 * means nothing, where a pid file checked with `process.kill(pid, 0)` would then wrongly refuse (or,
 * read between another process's check and write, wrongly admit). A second connection in the same
 * process is refused too (SQLite tracks locks per file across its connections). Like the store's own
 * locking, it needs a file system with working POSIX locks (a local disk or a volume shared on one
 * host; not every network file system).
 *
 * The lock database stays empty; it is not the store, so `doctor` and tools opening the store
 * (which do not take this lock) are never blocked by it. Nothing else in the process may open and
 * close this file: closing any descriptor of a file drops the process's POSIX locks on it.
 */
import Database from "better-sqlite3";
import type { HeldLock } from "../single-process-lock.js";

/** The lock database's name inside the data folder. */
export const SQLITE_LOCK_FILE_NAME = "coworker.lock";

/** Take the lock on `file` (created when missing): the held lock, or undefined while another connection holds it. */
export function trySqliteLock(file: string): HeldLock | undefined {
  const db = new Database(file, { timeout: 0 });
  try {
    db.exec("BEGIN EXCLUSIVE");
  } catch (error) {
    db.close();
    if ((error as { code?: unknown }).code === "SQLITE_BUSY") return undefined;
    throw error;
  }
  return {
    release: async () => {
      // Closing rolls the open transaction back, which drops the lock.
      db.close();
    },
  };
}
