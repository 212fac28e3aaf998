/**
 * A file's SHA-256, read in chunks: a large file neither blocks the event loop nor sits in memory
 * whole. Optionally capped, for a file that may have grown since its size was checked.
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";

/**
 * sha256 (hex) of the bytes of `file` — or, given `maxBytes`, undefined once it turns out to hold
 * more than that.
 */
export function fileSha256(file: string): Promise<string>;
export function fileSha256(file: string, maxBytes: number): Promise<string | undefined>;
export async function fileSha256(
  file: string,
  maxBytes = Number.POSITIVE_INFINITY,
): Promise<string | undefined> {
  const hash = createHash("sha256");
  let read = 0;
  for await (const chunk of createReadStream(file)) {
    read += (chunk as Buffer).byteLength;
    if (read > maxBytes) return undefined;
    hash.update(chunk as Buffer);
  }
  return hash.digest("hex");
}
