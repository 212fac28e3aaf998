/**
 * Whether a host path is there, for what the sandbox prepares on the host before a command: it
 * makes folders only inside a workspace that exists (a missing workspace is no command's to make).
 */
import { stat } from "node:fs/promises";
import { isMissing } from "../../core/missing-file.js";

/** Whether `file` is there, links followed; any failure but "missing" throws. */
export async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    (error: unknown) => {
      if (isMissing(error)) return false;
      throw error;
    },
  );
}
