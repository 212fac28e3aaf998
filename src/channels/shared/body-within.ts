/**
 * Reading a download whole while holding it to a size and a time: the body is read chunk by chunk
 * and given up (the rest cancelled) as soon as it passes the limit, so a file that lies about its
 * size, or has none, never fills memory past the limit; and the whole download, the answer's body
 * included, runs under one deadline (60 s unless a channel sets another), whose abort becomes the
 * same words in the note on every platform. The files people send arrive this way on every
 * platform; where the file lives and how to ask for it stays with each channel.
 */

/** How long one file's download may take, in ms, where a channel sets no other deadline. */
export const DOWNLOAD_TIMEOUT_MS = 60_000;

/** One download's deadline (see `downloadDeadline`). */
export interface DownloadDeadline {
  /** For fetch: it aborts the answer's body too, so `readBodyWithin` stops with it. */
  readonly signal: AbortSignal;
  /** The reason for the note when `error` is this deadline's abort; undefined for any other failure. */
  overdue(error: unknown): string | undefined;
}

/** A deadline `timeoutMs` from now for one download (`DOWNLOAD_TIMEOUT_MS` by default). */
export function downloadDeadline(timeoutMs: number = DOWNLOAD_TIMEOUT_MS): DownloadDeadline {
  return {
    signal: AbortSignal.timeout(timeoutMs),
    overdue: (error) =>
      error instanceof DOMException && error.name === "TimeoutError"
        ? `the download took longer than ${timeoutMs / 1000} s`
        : undefined,
  };
}

/** A size in the notes about a file's limit: "1.5 MB". */
export function megabytes(bytes: number): string {
  return `${(bytes / 1_048_576).toFixed(1)} MB`;
}

/** `body` read whole; `tooLarge()` is thrown once it passes `maxBytes` (an absent body is empty). */
export async function readBodyWithin(
  body: ReadableStream<Uint8Array> | null | undefined,
  maxBytes: number,
  tooLarge: () => Error,
): Promise<Buffer> {
  const reader = body?.getReader();
  if (!reader) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks);
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
}
