/**
 * OpenAIProvider reads an HTTP error's body only up to ERROR_BODY_LIMIT: a server whose error body
 * never ends (or is huge) fails the call with the usual mapped error, without the body being
 * downloaded. A real local HTTP server stands in for the endpoint (nock buffers whole bodies).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { APIError } from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { ERROR_BODY_LIMIT } from "../../../src/engine/provider/openai-errors.js";
import { ProviderError } from "../../../src/engine/provider/provider.js";
import { collect, request, testProvider } from "./sse-helpers.js";

/**
 * Bytes where an "endless" body ends after all, so a client that reads it whole still finishes:
 * far beyond what the socket buffers between server and client hold.
 */
const GUARD_BYTES = 64 * 1024 * 1024;

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/**
 * A server answering every request with `status` and a body of `prefix` then "a"s: `total` bytes
 * in all, or "endless" (GUARD_BYTES). `sent()` is what it wrote, `closed` settles when the
 * client hung up or the body ended.
 */
async function errorServer(status: number, prefix: string, total?: number) {
  let written = 0;
  let closed!: () => void;
  const done = new Promise<void>((resolve) => {
    closed = resolve;
  });
  const block = Buffer.alloc(16 * 1024, 0x61);
  const server = createServer((req, res) => {
    req.resume();
    res.on("close", closed);
    res.writeHead(status, { "content-type": "application/json" });
    res.write(prefix);
    written += prefix.length;
    const limit = total ?? GUARD_BYTES;
    const pump = (): void => {
      while (!res.destroyed && written < limit) {
        const part = block.subarray(0, Math.min(block.length, limit - written));
        written += part.length;
        if (!res.write(part)) return void res.once("drain", pump);
      }
      if (!res.destroyed) res.end();
    };
    pump();
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { baseURL: `http://127.0.0.1:${port}/v1`, sent: () => written, closed: done };
}

describe("OpenAIProvider error bodies", () => {
  it("stops reading an endless 500 body at the limit and fails with the server error", async () => {
    const server = await errorServer(500, '{"error":{"message":"');
    const { provider } = testProvider({ baseURL: server.baseURL, maxRetries: 0 });
    const { error } = await collect(provider.stream(request()));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ kind: "server", status: 500 });
    expect((error as Error).message).toBe(
      "The model endpoint had a server error (HTTP 500). Try again shortly.",
    );
    await server.closed; // the client hung up
    // What the socket buffers took (a few MB), not the whole body.
    expect(server.sent()).toBeLessThan(GUARD_BYTES);
  });

  it("keeps at most ERROR_BODY_LIMIT bytes of a large error body, still mapping it", async () => {
    const server = await errorServer(400, "the request was bad: ", 5 * 1024 * 1024);
    const { provider } = testProvider({ baseURL: server.baseURL, maxRetries: 0 });
    const { error } = await collect(provider.stream(request()));
    expect(error).toMatchObject({ kind: "bad_request", status: 400 });
    expect((error as Error).message).toMatch(
      /^The model endpoint rejected the request \(HTTP 400\): 400 the request was bad: a+…$/,
    );
    const cause = (error as Error).cause;
    expect(cause).toBeInstanceOf(APIError);
    // The SDK's error quotes the body it was given: the first ERROR_BODY_LIMIT bytes only.
    expect((cause as APIError).message).toContain("the request was bad: ");
    expect((cause as APIError).message.length).toBeLessThanOrEqual(ERROR_BODY_LIMIT + 100);
  });
});
