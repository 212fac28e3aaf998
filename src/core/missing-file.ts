/**
 * A file-system error's code, and whether it says the path is not there: the file is missing
 * (ENOENT), or a folder on its way is a file (ENOTDIR). Callers treat both as "nothing here", not
 * as a failure.
 */

/** A file-system error's code ("ENOENT", …), or undefined for anything else. */
export function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** True for ENOENT and ENOTDIR. */
export function isMissing(error: unknown): boolean {
  const code = errorCode(error);
  return code === "ENOENT" || code === "ENOTDIR";
}
