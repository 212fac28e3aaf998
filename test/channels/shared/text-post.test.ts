/**
 * postText against a real local server: it sends the body with its length, reads the whole answer
 * (status, repeated headers, body), reuses one connection, and rejects — never hangs — when the
 * call is aborted before or while waiting, the connection drops mid-answer, or the answer is
 * endless.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_ANSWER_BYTES, postText } from "../../../src/channels/shared/text-post.js";

interface Received {
  readonly method: string | undefined;
  readonly headers: IncomingMessage["headers"];
  readonly body: string;
  readonly socket: number;
}

let server: Server;
let url: string;
let received: Received[];
const sockets = new Map<object, number>();

async function bodyOf(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

beforeEach(async () => {
  received = [];
  sockets.clear();
  server = createServer(async (request, response) => {
    if (!sockets.has(request.socket)) sockets.set(request.socket, sockets.size);
    received.push({
      method: request.method,
      headers: request.headers,
      body: await bodyOf(request),
      socket: sockets.get(request.socket) as number,
    });
    if (request.url === "/hang") return;
    if (request.url === "/cut") {
      response.writeHead(200, { "content-type": "application/json", "content-length": "100" });
      response.write('{"ok":');
      setTimeout(() => request.socket.destroy(), 20);
      return;
    }
    if (request.url === "/endless") {
      response.writeHead(200, { "content-type": "application/json" });
      const chunk = Buffer.alloc(1_048_576, "x");
      const more = () => {
        while (!response.destroyed && response.write(chunk));
        if (!response.destroyed) response.once("drain", more);
      };
      return more();
    }
    if (request.url === "/html") {
      response.writeHead(502, { "content-type": "text/html" });
      return response.end("<html>Bad Gateway</html>");
    }
    response.writeHead(200, [
      ["content-type", "application/json"],
      ["set-cookie", "a=1"],
      ["set-cookie", "b=2"],
    ]);
    response.end(JSON.stringify({ ok: true, result: { echoed: received.at(-1)?.body } }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("postText", () => {
  it("posts the body with its headers and length, and hands back the whole answer", async () => {
    const body = JSON.stringify({ text: "héllo 👋" });
    const response = await postText(`${url}/call`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    expect(received[0]?.method).toBe("POST");
    expect(received[0]?.headers["content-type"]).toBe("application/json");
    expect(received[0]?.headers["content-length"]).toBe(String(Buffer.byteLength(body)));
    expect(received[0]?.body).toBe(body);
    expect(response.status).toBe(200);
    expect(response.url).toBe(`${url}/call`);
    expect(response.headers.raw()["set-cookie"]).toEqual(["a=1", "b=2"]);
    expect(await response.json()).toEqual({ ok: true, result: { echoed: body } });
  });

  it("takes headers given as a Headers object", async () => {
    await postText(`${url}/call`, { headers: new Headers({ "x-token": "t" }), body: "a=1" });
    expect(received[0]?.headers["x-token"]).toBe("t");
  });

  it("keeps the connection for the next call", async () => {
    for (let i = 0; i < 3; i++) await (await postText(`${url}/call`, { body: "{}" })).json();
    expect(received.map((r) => r.socket)).toEqual([0, 0, 0]);
  });

  it("hands back an answer that is not JSON as it is, and its json() rejects", async () => {
    const response = await postText(`${url}/html`, { body: "{}" });
    expect(response.status).toBe(502);
    await expect(response.json()).rejects.toThrow();
  });

  it("rejects a call aborted while it waits, and one aborted before it starts", async () => {
    const controller = new AbortController();
    const call = postText(`${url}/hang`, { body: "{}", signal: controller.signal });
    await expect.poll(() => received.length).toBe(1);
    controller.abort();
    await expect(call).rejects.toMatchObject({ name: "AbortError" });
    await expect(postText(`${url}/call`, { body: "{}", signal: controller.signal })).rejects.toMatchObject({
      name: "AbortError",
    });
    expect(received).toHaveLength(1);
  });

  it("rejects when the connection drops before the answer ends", async () => {
    await expect(postText(`${url}/cut`, { body: "{}" })).rejects.toThrow();
  });

  it("gives up on an answer past MAX_ANSWER_BYTES instead of holding it all", async () => {
    await expect(postText(`${url}/endless`, { body: "{}" })).rejects.toThrow(
      `the answer is over ${MAX_ANSWER_BYTES} bytes`,
    );
  });

  it("rejects with the network's error code when nothing listens", async () => {
    const closed = url;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    server = createServer();
    server.listen(0, "127.0.0.1");
    await expect(postText(`${closed}/call`, { body: "{}" })).rejects.toMatchObject({ code: "ECONNREFUSED" });
  });
});
