/**
 * Owner-only files for what Coworker keeps on disk (the database, its log): created 0600, and a
 * file made before with group or other access has it taken off — under the usual umask 022 they
 * were world-readable. A file that is missing or not this user's to change is left as it is.
 */
import { closeSync, constants, fchmodSync, fstatSync, openSync } from "node:fs";

/** Take group and other access off `fd`'s file when it has any (not this user's file: left as is). */
function tighten(fd: number): void {
  const mode = fstatSync(fd).mode & 0o777;
  if ((mode & 0o077) === 0) return;
  try {
    fchmodSync(fd, mode & 0o700);
  } catch {
    // Not this user's file to change: leave it.
  }
}

/**
 * Make `file` exist and be owner-only: created 0600 when missing (opened read-only, so no write
 * access is needed for an existing one), tightened when it exists with more access.
 */
export function ensurePrivateFile(file: string): void {
  const fd = openSync(file, constants.O_RDONLY | constants.O_CREAT, 0o600);
  try {
    tighten(fd);
  } finally {
    closeSync(fd);
  }
}

/** Tighten `file` to owner-only if it exists (a database's -wal and -shm, made by SQLite). */
export function tightenIfPresent(file: string): void {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY);
  } catch {
    return;
  }
  try {
    tighten(fd);
  } finally {
    closeSync(fd);
  }
}
