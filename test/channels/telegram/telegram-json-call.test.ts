/**
 * The Bot API client of the channel (grammY's Api under deadlineTransformer): a JSON call is
 * posted by postJsonCall — to the method's URL, as JSON without null fields — and not through
 * node-fetch; an upload (multipart) still goes through grammY's client and node-fetch; Telegram's
 * refusals stay GrammyErrors and network failures HttpErrors (which the network retry acts on).
 */
import { Api, GrammyError, HttpError, InputFile } from "grammy";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { deadlineTransformer } from "../../../src/channels/telegram/telegram-deadlines.js";
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
    if (request.path?.endsWith("/getMe")) {
      response.end("<html>Bad Gateway</html>");
      return;
    }
    response.end(
      JSON.stringify({ ok: true, result: { message_id: 7, date: 0, chat: { id: 1, type: "private" } } }),
    );
  });
});

afterEach(() => server.close());

function api(): Api {
  const client = new Api(TOKEN, { apiRoot: server.url });
  client.config.use(deadlineTransformer({ apiRoot: server.url, token: TOKEN }));
  return client;
}

describe("JSON calls of the channel's Bot API client", () => {
  it("are posted as JSON without null fields, not through node-fetch, and read Telegram's answer", async () => {
    const sent = await api().sendMessage(1, "hello", { reply_markup: null as never, message_thread_id: 4 });
    expect(sent.message_id).toBe(7);
    const [call] = server.received;
    expect(call?.path).toBe(`/bot${TOKEN}/sendMessage`);
    expect(call?.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(call?.body ?? "")).toEqual({ chat_id: 1, text: "hello", message_thread_id: 4 });
    // node-fetch names itself; the call did not go through it.
    expect(call?.headers["user-agent"]).toBeUndefined();
  });

  it("leave uploads to grammY's client, which posts them whole through node-fetch", async () => {
    await api().sendDocument(1, new InputFile(Buffer.from("file body"), "notes.txt"));
    const [call] = server.received;
    expect(call?.headers["user-agent"]).toMatch(/node-fetch/);
    expect(call?.headers["content-type"]).toMatch(/^multipart\/form-data/);
    expect(call?.body).toContain("file body");
  });

  it("keep Telegram's refusal a GrammyError, and a dropped connection or an answer not JSON an HttpError", async () => {
    await expect(api().deleteMessage(1, 2)).rejects.toBeInstanceOf(GrammyError);
    await expect(api().getChat(1)).rejects.toBeInstanceOf(HttpError);
    await expect(api().getMe()).rejects.toBeInstanceOf(HttpError);
  });
});
