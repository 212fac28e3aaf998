/**
 * Reading a download whole while holding it to a size: the body is read chunk by chunk and given
 * up (the rest cancelled) as soon as it passes the limit, so a file that lies about its size, or
 * has none, never fills memory past the limit. The files people send arrive this way on every
 * platform.
 */

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
