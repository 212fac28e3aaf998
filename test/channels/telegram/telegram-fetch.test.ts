/**
 * telegramFetch under grammY's real Api client: JSON calls go through postText, uploads (multipart)
 * through node-fetch as before, and grammY still tells Telegram's refusals (GrammyError) from
 * network failures (HttpError, which the network retry acts on).
 */
import { Api, GrammyError, HttpError, InputFile } from "grammy";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { telegramFetch } from "../../../src/channels/telegram/telegram-fetch.js";
import { type RecordingHttpServer, startRecordingHttpServer } from "../../support/recording-http-server.js";

const TOKEN = "123:abc";
let server: RecordingHttpServer;

beforeEach(async () => {
  server = await startRecordingHttpServer((request, response) => {
    response.setHeader("content-type", "application/json");
    if (request.path?.endsWith("/deleteMessage")) {
      response.statusCode = 400;
      response.end(JSON.stringify({ ok: false, error_code: 400, description: "Bad Request: no" }));
      return;
    }
    if (request.path?.endsWith("/getChat")) {
      request.socket.destroy();
      return;
    }
    response.end(
      JSON.stringify({ ok: true, result: { message_id: 7, date: 0, chat: { id: 1, type: "private" } } }),
    );
  });
});

afterEach(() => server.close());

const api = () => new Api(TOKEN, { apiRoot: server.url, fetch: telegramFetch });

describe("telegramFetch", () => {
  it("posts JSON calls itself and reads Telegram's answer", async () => {
    const sent = await api().sendMessage(1, "hello");
    expect(sent.message_id).toBe(7);
    const [call] = server.received;
    expect(call?.path).toBe(`/bot${TOKEN}/sendMessage`);
    expect(call?.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(call?.body ?? "")).toMatchObject({ chat_id: 1, text: "hello" });
    // node-fetch names itself; the call did not go through it.
    expect(call?.headers["user-agent"]).toBeUndefined();
  });

  it("sends uploads through node-fetch, whole", async () => {
    await api().sendDocument(1, new InputFile(Buffer.from("file body"), "notes.txt"));
    const [call] = server.received;
    expect(call?.headers["user-agent"]).toMatch(/node-fetch/);
    expect(call?.headers["content-type"]).toMatch(/^multipart\/form-data/);
    expect(call?.body).toContain("file body");
  });

  it("keeps Telegram's refusal a GrammyError and a dropped connection an HttpError", async () => {
    await expect(api().deleteMessage(1, 2)).rejects.toBeInstanceOf(GrammyError);
    await expect(api().getChat(1)).rejects.toBeInstanceOf(HttpError);
  });
});
