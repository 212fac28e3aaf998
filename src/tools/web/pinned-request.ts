/**
 * One HTTP(S) GET connected to an address checked beforehand (custom `lookup` on a one-off
 * agent), so a second DNS answer cannot redirect the connection; TLS still verifies the hostname.
 * The body is decompressed (gzip, deflate, br) and read up to a byte limit. A failure is named by
 * its error code, never by Node's message, which may quote the peer (network-failure.ts).
 */
import http, { type IncomingHttpHeaders } from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { pipeline, type Readable } from "node:stream";
import zlib from "node:zlib";
import { networkFailure } from "./network-failure.js";
import type { PinnedAddress } from "./ssrf-guard.js";

/** A response with at most `maxBytes` of its (decompressed) body. */
export interface FetchedResponse {
  readonly status: number;
  readonly statusText: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  /** The body was longer than the limit and was cut. */
  readonly truncated: boolean;
}

/** Thrown for transport failures (connection, TLS, decoding), named in our words (network-failure.ts). */
export class FetchError extends Error {
  override readonly name = "FetchError";
}

function pinnedLookup(pinned: PinnedAddress): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address: pinned.address, family: pinned.family }]);
    else callback(null, pinned.address, pinned.family);
  };
}

/**
 * The response's body, decompressed. Joined by `pipeline`, not `pipe`: a connection dropped
 * mid-body (or the request aborted at its deadline) then fails the decompressor too, so the read
 * ends instead of waiting for ever, and a read that stops early tears the response down.
 */
function decoded(response: http.IncomingMessage): Readable {
  const encoding = String(response.headers["content-encoding"] ?? "")
    .trim()
    .toLowerCase();
  const decompressor =
    encoding === "gzip" || encoding === "x-gzip"
      ? zlib.createGunzip()
      : encoding === "deflate"
        ? zlib.createInflate()
        : encoding === "br"
          ? zlib.createBrotliDecompress()
          : undefined;
  // The read loop sees the pipeline's failure as the decompressor's error.
  return decompressor ? pipeline(response, decompressor, () => undefined) : response;
}

async function readLimited(
  stream: Readable,
  maxBytes: number,
): Promise<{ body: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buffer = chunk as Buffer;
    if (size + buffer.length > maxBytes) {
      chunks.push(buffer.subarray(0, maxBytes - size));
      stream.destroy();
      return { body: Buffer.concat(chunks), truncated: true };
    }
    chunks.push(buffer);
    size += buffer.length;
  }
  return { body: Buffer.concat(chunks), truncated: false };
}

/** GET `url`, connecting only to `pinned`. Redirects are not followed (the caller checks each hop). */
export function pinnedGet(
  url: URL,
  pinned: PinnedAddress,
  options: {
    readonly signal: AbortSignal;
    readonly maxBytes: number;
    readonly headers: Record<string, string>;
  },
): Promise<FetchedResponse> {
  const client = url.protocol === "https:" ? https : http;
  const agent = new client.Agent({ keepAlive: false, lookup: pinnedLookup(pinned) });
  return new Promise<FetchedResponse>((resolve, reject) => {
    const request = client.get(
      url,
      { agent, headers: options.headers, signal: options.signal },
      (response) => {
        const status = response.statusCode ?? 0;
        const head = { status, statusText: response.statusMessage ?? "", headers: response.headers };
        if (status >= 300 && status < 400 && response.headers.location) {
          response.destroy();
          resolve({ ...head, body: Buffer.alloc(0), truncated: false });
          return;
        }
        readLimited(decoded(response), options.maxBytes).then(
          (read) => resolve({ ...head, ...read }),
          (error: Error) =>
            reject(options.signal.aborted ? options.signal.reason : new FetchError(networkFailure(error))),
        );
      },
    );
    request.on("error", (error) => {
      reject(options.signal.aborted ? options.signal.reason : new FetchError(networkFailure(error)));
    });
  }).finally(() => agent.destroy());
}
