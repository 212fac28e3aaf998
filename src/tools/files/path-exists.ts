/**
 * Whether a host path is there, links followed: "missing" is an answer, any other failure (a
 * denied parent, say) is an error, so a caller never mistakes an unreadable path for an absent one
 * (the sandbox makes folders only inside a workspace that exists, and makes the steering places
 * that are missing).
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
