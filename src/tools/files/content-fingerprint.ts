/**
 * The fingerprint a binding tool's preview carries (ToolPreview.fingerprint): sha256 over the exact
 * parts a call's plan was built from (a file's current bytes, the new text, a skill's files), each
 * tagged by its kind and length so that no two different lists of parts hash alike.
 */
import { createHash } from "node:crypto";

/** One part of a plan: text, bytes, a number (a size) or nothing (absent, unreadable). */
export type FingerprintPart = string | Uint8Array | number | null | undefined;

/** sha256 (hex) of `parts`, in order. */
export function contentFingerprint(parts: readonly FingerprintPart[]): string {
  const hash = createHash("sha256");
  for (const part of parts) {
    if (part === undefined) hash.update("u;");
    else if (part === null) hash.update("n;");
    else if (typeof part === "number") hash.update(`#${part};`);
    else {
      const bytes = typeof part === "string" ? Buffer.from(part, "utf8") : part;
      hash.update(`${typeof part === "string" ? "s" : "b"}${bytes.byteLength}:`);
      hash.update(bytes);
    }
  }
  return hash.digest("hex");
}
