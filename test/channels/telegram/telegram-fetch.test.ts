/**
 * telegramFetch under grammY's real Api client: JSON calls go through postText, uploads (multipart)
 * through node-fetch as before, and grammY still tells Telegram's refusals (GrammyError) from
 * network failures (HttpError, which the network retry acts on).
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Api, GrammyError, HttpError, InputFile } from "grammy";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { telegramFetch } from "../../../src/channels/telegram/telegram-fetch.js";

interface Received {
  readonly path: string | undefined;
  readonly userAgent: string | undefined;
  readonly contentType: string | undefined;
  readonly body: string;
}

const TOKEN = "123:abc";
let server: Server;
let apiRoot: string;
let received: Received[];

async function bodyOf(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

beforeEach(async () => {
  received = [];
  server = createServer(async (request, response) => {
    received.push({
      path: request.url,
      userAgent: request.headers["user-agent"],
      contentType: request.headers["content-type"],
      body: await bodyOf(request),
    });
    response.setHeader("content-type", "application/json");
    if (request.url?.endsWith("/deleteMessage")) {
      response.statusCode = 400;
      return response.end(JSON.stringify({ ok: false, error_code: 400, description: "Bad Request: no" }));
    }
    if (request.url?.endsWith("/getChat")) return request.socket.destroy();
    response.end(
      JSON.stringify({ ok: true, result: { message_id: 7, date: 0, chat: { id: 1, type: "private" } } }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  apiRoot = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const api = () => new Api(TOKEN, { apiRoot, fetch: telegramFetch });

describe("telegramFetch", () => {
  it("posts JSON calls itself and reads Telegram's answer", async () => {
    const sent = await api().sendMessage(1, "hello");
    expect(sent.message_id).toBe(7);
    expect(received[0]?.path).toBe(`/bot${TOKEN}/sendMessage`);
    expect(received[0]?.contentType).toBe("application/json");
    expect(JSON.parse(received[0]?.body ?? "")).toMatchObject({ chat_id: 1, text: "hello" });
    // node-fetch names itself; the call did not go through it.
    expect(received[0]?.userAgent).toBeUndefined();
  });

  it("sends uploads through node-fetch, whole", async () => {
    await api().sendDocument(1, new InputFile(Buffer.from("file body"), "notes.txt"));
    expect(received[0]?.userAgent).toMatch(/node-fetch/);
    expect(received[0]?.contentType).toMatch(/^multipart\/form-data/);
    expect(received[0]?.body).toContain("file body");
  });

  it("keeps Telegram's refusal a GrammyError and a dropped connection an HttpError", async () => {
    await expect(api().deleteMessage(1, 2)).rejects.toBeInstanceOf(GrammyError);
    await expect(api().getChat(1)).rejects.toBeInstanceOf(HttpError);
  });
});
