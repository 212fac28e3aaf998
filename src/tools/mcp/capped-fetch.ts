/**
 * The fetch remote MCP servers are reached with: each response body stops at a size. A server is
 * not trusted, and the SDK reads a JSON reply, or an event of its stream, whole into memory, so one
 * that answers with gigabytes took the process, and every chat on it, down. Past the size the body
 * errors and the SDK fails that request.
 */
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { formatBytes } from "../../core/attachment.js";

/** What one response from a remote MCP server may hold: far more than any tool result the model is shown. */
export const MCP_RESPONSE_MAX_BYTES = 32 * 1024 * 1024;

/** `base` (the global fetch by default) with each response body cut off past `maxBytes`. */
export function cappedFetch(maxBytes: number, base: FetchLike = fetch): FetchLike {
  const tooLarge = () => new Error(`the MCP server's response is larger than ${formatBytes(maxBytes)}`);
  return async (url, init) => {
    const response = await base(url, init);
    if (response.body === null) return response;
    if (Number(response.headers.get("content-length")) > maxBytes) {
      await response.body.cancel();
      throw tooLarge();
    }
    let received = 0;
    const counted = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          received += chunk.byteLength;
          if (received > maxBytes) controller.error(tooLarge());
          else controller.enqueue(chunk);
        },
      }),
    );
    return new Response(counted, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
