/**
 * Telegram webhook mode: the webhook is registered behind its secret and takes only updates that
 * carry it, unreadable targets and oversized bodies are refused without stopping the server, and
 * an update is acknowledged (never re-sent) even when its handling fails or runs late.
 */
import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  ALICE,
  ALICE_DM,
  type Harness,
  MALLORY,
  MALLORY_DM,
  startHarness,
  TEST_WEBHOOK,
  WEBHOOK_SECRET,
} from "./harness.js";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

function post(port: number, path: string, body: unknown, secret?: string): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}${path}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(secret ? { "x-telegram-bot-api-secret-token": secret } : {}),
    },
    body: JSON.stringify(body),
  });
}

/**
 * Send `request` as raw bytes and resolve with the answer's status line, or "no answer" when
 * none comes within `waitMs` (fetch cannot send a request target URL parsing refuses).
 */
function rawRequest(port: number, request: string, waitMs = 2000): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(request));
    let answer = "";
    const finish = (line: string) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(line);
    };
    const timer = setTimeout(() => finish("no answer"), waitMs);
    socket.on("data", (chunk) => {
      answer += String(chunk);
      if (answer.includes("\r\n")) finish(answer.split("\r\n")[0] as string);
    });
    socket.on("error", () => finish("no answer"));
    socket.on("close", () => finish(answer.split("\r\n")[0] || "no answer"));
  });
}

/**
 * POST `total` bytes in 64 KiB chunks (chunked, so no Content-Length unless `declare`), and
 * resolve with the answer's status and how many bytes were written before it came. The server
 * may close the connection while the body is still being sent: that is no failure here.
 */
function streamPost(
  port: number,
  total: number,
  options: { secret?: string; declare?: boolean } = {},
): Promise<{ status: number | undefined; written: number }> {
  return new Promise((resolve) => {
    let written = 0;
    let done = false;
    const finish = (status: number | undefined) => {
      if (done) return;
      done = true;
      request.destroy();
      resolve({ status, written });
    };
    const request = httpRequest({
      host: "127.0.0.1",
      port,
      path: "/tg/hook",
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(options.secret ? { "x-telegram-bot-api-secret-token": options.secret } : {}),
        ...(options.declare ? { "content-length": String(total) } : {}),
      },
    });
    request.on("response", (response) => {
      response.resume();
      finish(response.statusCode);
    });
    request.on("error", () => finish(undefined));
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const pump = () => {
      while (!done && written < total) {
        const piece = chunk.subarray(0, Math.min(chunk.length, total - written));
        written += piece.length;
        if (!request.write(piece)) {
          request.once("drain", pump);
          return;
        }
      }
      if (!done) request.end();
    };
    pump();
  });
}

describe("Telegram channel: webhook mode", () => {
  it("registers the webhook with its secret and accepts only updates that carry it", async () => {
    harness = await startHarness({
      webhook: TEST_WEBHOOK,
    });
    const { tg, service, channel } = harness;
    expect(tg.state.webhook).toEqual({
      url: "https://bot.example.test/tg/hook",
      secret_token: WEBHOOK_SECRET,
    });
    expect(tg.callsOf("getUpdates")).toHaveLength(0);
    expect(channel.health()).toEqual({ ready: true, state: "listening" });
    expect(channel.description).toBe("telegram (webhook /tg/hook)");
    const port = channel.webhookPort()!;
    const update = {
      update_id: 5001,
      message: { message_id: 7, date: 1_700_000_000, chat: ALICE_DM, from: ALICE, text: "via webhook" },
    };
    expect((await post(port, "/tg/hook", update)).status).toBe(401);
    expect((await post(port, "/tg/hook", update, "wrong")).status).toBe(401);
    expect((await post(port, "/elsewhere", update, WEBHOOK_SECRET)).status).toBe(404);
    expect(service.received).toHaveLength(0);
    const accepted = await post(port, "/tg/hook", update, WEBHOOK_SECRET);
    expect(accepted.status).toBe(200);
    expect(service.received.map((message) => [message.text, message.dedupeKeys[0]])).toEqual([
      ["via webhook", `tg:${tg.botInfo.id}:update:5001`],
    ]);
  });

  it("answers 400 to a request target it cannot read, and goes on serving updates", async () => {
    harness = await startHarness({
      webhook: TEST_WEBHOOK,
    });
    const { service, channel } = harness;
    const port = channel.webhookPort()!;
    // Before the fix, `new URL("//[", …)` threw in node:http's request callback: an uncaught
    // exception, which ends the process (ops/fatal-errors.ts).
    const uncaught: unknown[] = [];
    const record = (error: unknown) => uncaught.push(error);
    process.on("uncaughtException", record);
    try {
      for (const target of ["//[", "//a:b@[::1", "http://[oops]/tg/hook"])
        expect(await rawRequest(port, `GET ${target} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n`)).toBe(
          "HTTP/1.1 400 Bad Request",
        );
    } finally {
      process.off("uncaughtException", record);
    }
    expect(uncaught).toEqual([]);
    expect(channel.health()).toEqual({ ready: true, state: "listening" });
    const update = {
      update_id: 5003,
      message: { message_id: 9, date: 1_700_000_000, chat: ALICE_DM, from: ALICE, text: "still here" },
    };
    expect((await post(port, "/tg/hook", update, WEBHOOK_SECRET)).status).toBe(200);
    expect(service.received.map((message) => message.text)).toEqual(["still here"]);
  });

  it("acknowledges an update whose handling failed, as polling does, so Telegram does not re-send it", async () => {
    harness = await startHarness({
      webhook: TEST_WEBHOOK,
    });
    const { tg, channel } = harness;
    // A stranger's /start where the bot may not write (muted in a group, a closed topic).
    tg.failNext("sendMessage", 403, "Forbidden: bot can't send messages here", 5);
    const update = {
      update_id: 5002,
      message: {
        message_id: 8,
        date: 1_700_000_000,
        chat: MALLORY_DM,
        from: MALLORY,
        text: "/start",
        entities: [{ type: "bot_command", offset: 0, length: 6 }],
      },
    };
    const answer = await post(channel.webhookPort()!, "/tg/hook", update, WEBHOOK_SECRET);
    expect(answer.status).toBe(200);
    expect(
      harness.logs().some((line) => line.msg === "telegram update failed" && line.updateId === 5002),
    ).toBe(true);
  });

  it("acknowledges an update still running in time, and logs its later failure without an unhandled rejection", async () => {
    // Before, grammY's own webhook timeout left `task.finally(...)` on the running update, so a
    // failure after it was an unhandled rejection, which ends the process (ops/fatal-errors.ts).
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", record);
    try {
      harness = await startHarness({
        webhook: { ...TEST_WEBHOOK, answerWithinMs: 100 },
      });
      const { tg, channel } = harness;
      // A stranger's /start: Telegram asks the bot to wait a second, then refuses (blocked meanwhile).
      tg.rateLimitNext("sendMessage", 1);
      tg.failNext("sendMessage", 403, "Forbidden: bot was blocked by the user");
      const update = {
        update_id: 5004,
        message: {
          message_id: 10,
          date: 1_700_000_000,
          chat: MALLORY_DM,
          from: MALLORY,
          text: "/start",
          entities: [{ type: "bot_command", offset: 0, length: 6 }],
        },
      };
      const started = Date.now();
      const answer = await post(channel.webhookPort()!, "/tg/hook", update, WEBHOOK_SECRET);
      expect(answer.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(900);
      const failed = () =>
        harness?.logs().some((line) => line.msg === "telegram update failed" && line.updateId === 5004);
      expect(failed()).toBe(false);
      const deadline = Date.now() + 5000;
      while (!failed() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(failed()).toBe(true);
      expect(
        harness.logs().some((line) => line.msg === "telegram webhook update still running, acknowledged"),
      ).toBe(true);
      // Rejections are reported after the microtask queue drains: give them a turn.
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      process.off("unhandledRejection", record);
    }
    expect(unhandled).toEqual([]);
  });

  it("refuses an authenticated body over the limit with 413 without reading it all, and goes on serving", async () => {
    harness = await startHarness({ webhook: { ...TEST_WEBHOOK, maxBodyBytes: 64 * 1024 } });
    const { service, channel } = harness;
    const port = channel.webhookPort()!;
    // Before, grammY's adapter buffered any body that carried the secret, however large.
    const streamed = await streamPost(port, 64 * 1024 * 1024, { secret: WEBHOOK_SECRET });
    expect(streamed.status).toBe(413);
    expect(streamed.written).toBeLessThan(64 * 1024 * 1024);
    const declared = await streamPost(port, 2 * 1024 * 1024, { secret: WEBHOOK_SECRET, declare: true });
    expect(declared.status).toBe(413);
    // Without the secret nothing of the body is read: 401 as before.
    expect((await streamPost(port, 1024 * 1024, {})).status).toBe(401);
    expect(service.received).toHaveLength(0);
    expect(
      harness.logs().some((line) => line.msg === "telegram webhook request body too large, refused"),
    ).toBe(true);
    const update = {
      update_id: 5005,
      message: { message_id: 11, date: 1_700_000_000, chat: ALICE_DM, from: ALICE, text: "small" },
    };
    expect((await post(port, "/tg/hook", update, WEBHOOK_SECRET)).status).toBe(200);
    expect(service.received.map((message) => message.text)).toEqual(["small"]);
  });

  it("refuses a body over 1 MiB by default", async () => {
    harness = await startHarness({ webhook: TEST_WEBHOOK });
    const port = harness.channel.webhookPort()!;
    expect((await streamPost(port, 1024 * 1024 + 1, { secret: WEBHOOK_SECRET })).status).toBe(413);
    expect(harness.service.received).toHaveLength(0);
  });
});
