/** The fake Bot API itself: Telegram's error texts and codes, long polling, files — via grammY's Api. */
import { Api, GrammyError } from "grammy";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeTelegram, startFakeTelegram } from "../../fakes/fake-telegram/fake-telegram.js";
import { parseTelegramHtml } from "../../fakes/fake-telegram/html-parser.js";
import { ALICE, ALICE_DM, FORUM } from "./harness.js";

let tg: FakeTelegram;
let api: Api;
beforeEach(async () => {
  tg = await startFakeTelegram();
  api = new Api(tg.token, { apiRoot: tg.apiRoot });
  tg.state.chat(ALICE_DM);
  tg.state.chat(FORUM);
});
afterEach(() => tg.close());

async function failure(
  call: Promise<unknown>,
): Promise<{ code: number; description: string; retryAfter?: number }> {
  try {
    await call;
  } catch (error) {
    if (error instanceof GrammyError) {
      return {
        code: error.error_code,
        description: error.description,
        ...(error.parameters.retry_after ? { retryAfter: error.parameters.retry_after } : {}),
      };
    }
    throw error;
  }
  throw new Error("the call succeeded");
}

describe("fake Bot API", () => {
  it("answers with Telegram's error texts", async () => {
    expect(await failure(api.sendMessage(ALICE.id, "x".repeat(4097)))).toEqual({
      code: 400,
      description: "Bad Request: message is too long",
    });
    expect(await failure(api.sendMessage(ALICE.id, "<b>open", { parse_mode: "HTML" }))).toEqual({
      code: 400,
      description: `Bad Request: can't parse entities: Can't find end tag corresponding to start tag "b"`,
    });
    expect((await failure(api.sendMessage(ALICE.id, "<b>x</i>", { parse_mode: "HTML" }))).description).toBe(
      `Bad Request: can't parse entities: Unmatched end tag at byte offset 4, expected "</b>", found "</i>"`,
    );
    const button = { text: "go", callback_data: "x".repeat(65) };
    expect(
      await failure(api.sendMessage(ALICE.id, "hi", { reply_markup: { inline_keyboard: [[button]] } })),
    ).toEqual({
      code: 400,
      description: "Bad Request: BUTTON_DATA_INVALID",
    });
    const sent = await api.sendMessage(ALICE.id, "same");
    expect((await failure(api.editMessageText(ALICE.id, sent.message_id, "same"))).description).toMatch(
      /^Bad Request: message is not modified/,
    );
    expect((await failure(api.sendMessage(FORUM.id, "general", { message_thread_id: 1 }))).description).toBe(
      "Bad Request: message thread not found",
    );
    expect(await failure(api.sendMessage(42, "nobody"))).toEqual({
      code: 400,
      description: "Bad Request: chat not found",
    });
  });

  it("counts length after entity parsing and accepts Telegram's tags and entities", async () => {
    const html = `<b>${"&amp;".repeat(4096)}</b>`;
    await expect(api.sendMessage(ALICE.id, html, { parse_mode: "HTML" })).resolves.toMatchObject({
      text: "&".repeat(4096),
    });
    expect(
      parseTelegramHtml(
        '<a href="https://x">a</a><tg-spoiler>s</tg-spoiler><pre><code class="language-js">1</code></pre>',
      ),
    ).toEqual({
      ok: true,
      text: "as1",
    });
    expect(parseTelegramHtml("<div>x</div>")).toEqual({
      ok: false,
      description: `Bad Request: can't parse entities: Unsupported start tag "div" at byte offset 0`,
    });
  });

  it("queues 429s with retry_after and 409s on request", async () => {
    tg.rateLimitNext("sendMessage", 7);
    expect(await failure(api.sendMessage(ALICE.id, "hi"))).toEqual({
      code: 429,
      description: "Too Many Requests: retry after 7",
      retryAfter: 7,
    });
    tg.conflictNext();
    expect((await failure(api.getUpdates({ timeout: 0 }))).code).toBe(409);
  });

  it("long-polls getUpdates, keeps updates until a later offset confirms them, and lets a new poller take over", async () => {
    const waiting = api.getUpdates({ timeout: 5 });
    const { update } = tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "one" });
    expect((await waiting).map((u) => u.update_id)).toEqual([update.update_id]);
    expect((await api.getUpdates({ timeout: 0 })).map((u) => u.update_id)).toEqual([update.update_id]);
    expect(await api.getUpdates({ offset: update.update_id + 1, timeout: 0 })).toEqual([]);
    expect(await api.getUpdates({ timeout: 0 })).toEqual([]);
    const first = api.getUpdates({ timeout: 5 });
    await tg.waitFor(() => tg.callsOf("getUpdates").length === 5);
    const second = api.getUpdates({ timeout: 0 });
    expect((await failure(first)).code).toBe(409);
    expect(await second).toEqual([]);
  });

  it("answers a second concurrent getUpdates with 409 when polls conflict, and the waiting poll keeps its place", async () => {
    const strict = await startFakeTelegram({ concurrentPolls: "conflict" });
    try {
      const strictApi = new Api(strict.token, { apiRoot: strict.apiRoot });
      strict.state.chat(ALICE_DM);
      const first = strictApi.getUpdates({ timeout: 5 });
      await strict.waitFor(() => strict.callsOf("getUpdates").length === 1);
      const second = await failure(strictApi.getUpdates({ timeout: 5 }));
      expect(second).toEqual({
        code: 409,
        description:
          "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
      });
      expect(strict.pollConflicts).toBe(1);
      const { update } = strict.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "one" });
      expect((await first).map((u) => u.update_id)).toEqual([update.update_id]);
      expect(await strictApi.getUpdates({ offset: update.update_id + 1, timeout: 0 })).toEqual([]);
      expect(strict.pollConflicts).toBe(1);
    } finally {
      await strict.close();
    }
  });

  it("serves files by getFile path and answers the remaining methods", async () => {
    const { message } = tg.sendUserMessage({
      chat: ALICE_DM,
      from: ALICE,
      document: { content: Buffer.from("payload"), name: "a.txt" },
    });
    const fileId = (message.document as { file_id: string }).file_id;
    const file = await api.getFile(fileId);
    const response = await fetch(`${tg.apiRoot}/file/bot${tg.token}/${file.file_path}`);
    expect(await response.text()).toBe("payload");
    expect((await fetch(`${tg.apiRoot}/file/botWRONG/${file.file_path}`)).status).toBe(404);
    await expect(api.getChatMember(ALICE.id, ALICE.id)).resolves.toMatchObject({ status: "member" });
    await expect(api.sendMessageDraft(ALICE.id, 5, "draft")).resolves.toBe(true);
    expect(tg.state.drafts).toEqual([{ chat_id: ALICE.id, draft_id: 5, text: "draft" }]);
    expect((await failure(api.sendMessageDraft(FORUM.id, 5, "no"))).description).toBe(
      "Bad Request: TEXTDRAFT_PEER_INVALID",
    );
    const wrongToken = new Api("1:nope", { apiRoot: tg.apiRoot });
    expect((await failure(wrongToken.getMe())).code).toBe(401);
  });
});
