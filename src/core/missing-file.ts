/**
 * Whether a file-system error says the path is not there: the file is missing (ENOENT), or a
 * folder on its way is a file (ENOTDIR). Callers treat both as "nothing here", not as a failure.
 */

/** True for ENOENT and ENOTDIR. */
export function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === "ENOENT" || code === "ENOTDIR";
}
