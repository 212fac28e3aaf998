/**
 * Deadlines of Bot API calls: which calls get which deadline, a call never answered ends at its
 * own with an error that names the method and the deadline but not the token, a long poll and an
 * upload are not cut by the ordinary deadline, the caller's abort still ends a call — and in the
 * channel a turn's answer that is never answered is tried again, then reported, instead of
 * holding the turn.
 */
import { getEventListeners } from "node:events";
import { Bot, GrammyError, HttpError, InputFile, type Transformer } from "grammy";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import {
  BotApiTimeout,
  type CallDeadlines,
  DEFAULT_CALL_DEADLINES,
  deadlineOf,
  deadlineTransformer,
} from "../../../src/channels/telegram/telegram-deadlines.js";
import { errorText } from "../../../src/channels/telegram/telegram-errors.js";
import { TelegramChannel } from "../../../src/channels/telegram/telegram-channel.js";
import { memorySpace } from "../../skills/support.js";
import { storeSlotBudget } from "../../../src/store/slot-budget.js";
import { agentEvent } from "../../../src/core/events.js";
import { type FakeTelegram, startFakeTelegram } from "../../fakes/fake-telegram/fake-telegram.js";
import { ALICE, ALICE_DM, type Harness, ScriptedService, startHarness } from "./harness.js";
import { type Stack, startStack } from "./stack.js";
import { OPEN_UPLOADS } from "../../support/test-upload-gate.js";

/** Short deadlines, each kind its own, so an error tells which one a call got. */
const SHORT: CallDeadlines = { callMs: 200, editMs: 300, uploadMs: 400, pollMarginMs: 5_000 };
/**
 * For a whole channel, whose calls are answered at once but may wait on a busy test machine: a
 * shortened ordinary deadline, the rest as they are.
 */
const CHANNEL: CallDeadlines = { ...DEFAULT_CALL_DEADLINES, callMs: 800 };
/** An endpoint nothing listens on: the clean-up tests' calls never reach it. */
const ENDPOINT = { apiRoot: "http://127.0.0.1:1", token: "123456:TEST-token" };

describe("deadlineOf", () => {
  const file = new InputFile(Buffer.from("x"), "x.txt");

  it("gives each kind of call its deadline", () => {
    const of = (method: string, payload: unknown) => deadlineOf(method, payload, SHORT);
    expect(of("sendMessage", { chat_id: 1, text: "hi" })).toBe(200);
    expect(of("deleteMessage", { chat_id: 1, message_id: 2 })).toBe(200);
    expect(of("sendDocument", { chat_id: 1, document: "file-id" })).toBe(200);
    expect(of("editMessageText", { chat_id: 1, message_id: 2, text: "hi" })).toBe(300);
    expect(of("editMessageReplyMarkup", { chat_id: 1, message_id: 2 })).toBe(300);
    expect(of("sendChatAction", { chat_id: 1, action: "typing" })).toBe(300);
    expect(of("sendMessageDraft", { chat_id: 1, draft_id: 3, text: "hi" })).toBe(300);
    expect(of("answerCallbackQuery", { callback_query_id: "q" })).toBe(300);
    expect(of("sendDocument", { chat_id: 1, document: file })).toBe(400);
    expect(of("sendMediaGroup", { chat_id: 1, media: [{ type: "photo", media: file }] })).toBe(400);
    expect(of("editMessageMedia", { chat_id: 1, message_id: 2, media: { type: "photo", media: file } })).toBe(
      400,
    );
    expect(of("getUpdates", { offset: 5, timeout: 30 })).toBe(35_000);
    expect(of("getUpdates", { offset: 5 })).toBe(5_000);
  });

  it("defaults to 30 s, 10 s for edits and chat actions, 5 min for uploads, a poll's timeout + 10 s", () => {
    const of = (method: string, payload: unknown) => deadlineOf(method, payload, DEFAULT_CALL_DEADLINES);
    expect(of("sendMessage", { chat_id: 1, text: "hi" })).toBe(30_000);
    expect(of("editMessageText", { chat_id: 1, message_id: 2, text: "hi" })).toBe(10_000);
    expect(of("sendChatAction", { chat_id: 1, action: "typing" })).toBe(10_000);
    expect(of("sendPhoto", { chat_id: 1, photo: file })).toBe(300_000);
    expect(of("getUpdates", { timeout: 30 })).toBe(40_000);
  });
});

describe("deadlineTransformer on the Bot API client", () => {
  let tg: FakeTelegram | undefined;
  afterEach(async () => {
    await tg?.close();
    tg = undefined;
  });

  /** grammY's API client on the fake, with only the deadlines installed (no retries). */
  async function clientWith(deadlines: CallDeadlines) {
    tg = await startFakeTelegram();
    const bot = new Bot(tg.token, { client: { apiRoot: tg.apiRoot }, botInfo: tg.botInfo });
    bot.api.config.use(deadlineTransformer({ apiRoot: tg.apiRoot, token: tg.token }, deadlines));
    return { tg, api: bot.api };
  }

  /** The error `call` fails with (the test fails if it succeeds). */
  async function failureOf(call: Promise<unknown>): Promise<Error> {
    const outcome = await call.then(
      () => undefined,
      (error: unknown) => error,
    );
    if (!(outcome instanceof Error)) throw new Error(`expected the call to fail, got ${String(outcome)}`);
    return outcome;
  }

  it("ends a call never answered at its deadline, naming the method and the deadline, not the token", async () => {
    const { tg, api } = await clientWith(SHORT);
    tg.holdNext("sendMessage");
    const error = await failureOf(api.sendMessage(ALICE.id, "hello"));
    expect(error).toBeInstanceOf(BotApiTimeout);
    expect(error).toBeInstanceOf(HttpError);
    expect(errorText(error)).toBe("sendMessage: no answer from the Bot API within 0.2 s");
    const secret = tg.token.split(":")[1]!;
    for (const text of [error.message, String(error.stack), JSON.stringify(error)]) {
      expect(text).not.toContain(secret);
    }
    expect(tg.callsOf("sendMessage").map((call) => call.error)).toEqual(["held without an answer"]);
  });

  it("gives getUpdates its long poll, not the ordinary deadline", async () => {
    const { tg, api } = await clientWith(SHORT);
    // The fake holds a poll with nothing to deliver for its 1 s timeout, five times callMs.
    await expect(api.getUpdates({ timeout: 1 })).resolves.toEqual([]);
    expect(tg.callsOf("getUpdates")).toHaveLength(1);
  });

  it("gives an upload the upload deadline, and a file sent by id the ordinary one", async () => {
    const { tg, api } = await clientWith(SHORT);
    tg.holdNext("sendDocument", 2);
    const upload = await failureOf(api.sendDocument(ALICE.id, new InputFile(Buffer.from("data"), "a.txt")));
    expect(upload).toMatchObject({ method: "sendDocument", deadlineMs: 400 });
    expect(upload.message).toBe("sendDocument: no answer from the Bot API within 0.4 s");
    const byId = await failureOf(api.sendDocument(ALICE.id, "known-file-id"));
    expect(byId).toMatchObject({ method: "sendDocument", deadlineMs: 200 });
    // The upload did reach the fake as multipart, with its file.
    expect(tg.callsOf("sendDocument")[0]?.params.document).toMatchObject({ filename: "a.txt" });
  });

  it("unlinks the caller's signal from a call once it is answered, fails or passes its deadline", async () => {
    const { tg, api } = await clientWith(SHORT);
    const caller = new AbortController();
    const listeners = () => getEventListeners(caller.signal, "abort").length;
    const send = () => api.sendMessage(ALICE.id, "hello", {}, caller.signal as never);
    // Answered: the fake knows no chat of Alice's, and says so.
    const answered = send();
    expect(listeners()).toBe(1);
    await expect(answered).rejects.toBeInstanceOf(GrammyError);
    expect(listeners()).toBe(0);
    tg.dropNext("sendMessage");
    await expect(send()).rejects.toBeInstanceOf(HttpError);
    expect(listeners()).toBe(0);
    tg.holdNext("sendMessage");
    await expect(send()).rejects.toBeInstanceOf(BotApiTimeout);
    expect(listeners()).toBe(0);
  });

  it("fails a call whose connection drops with an HttpError, and Telegram's refusal with a GrammyError", async () => {
    const { tg, api } = await clientWith(SHORT);
    tg.dropNext("sendMessage");
    const dropped = await failureOf(api.sendMessage(ALICE.id, "hello"));
    expect(dropped).toBeInstanceOf(HttpError);
    expect(dropped).not.toBeInstanceOf(BotApiTimeout);
    expect(dropped.message).toBe("Network request for 'sendMessage' failed!");
    await expect(api.sendMessage(ALICE.id, "hello")).rejects.toThrow("Bad Request: chat not found");
  });

  it("still lets the caller abort a call", async () => {
    // Deadlines longer than the test's own timeout: only the abort can end the call in time.
    const { tg, api } = await clientWith({ ...SHORT, callMs: 60_000 });
    tg.holdNext("sendMessage");
    const caller = new AbortController();
    const call = failureOf(api.sendMessage(ALICE.id, "hello", {}, caller.signal as never));
    await tg.waitFor(() => tg.callsOf("sendMessage").length === 1);
    caller.abort();
    const error = await call;
    expect(error).toBeInstanceOf(HttpError);
    expect(error).not.toBeInstanceOf(BotApiTimeout);
  });
});

describe("deadlineTransformer's clean-up of an upload (through grammY's client)", () => {
  type Prev = Parameters<Transformer>[0];
  /** A call the test answers by hand, and the abort signal the transformer handed it. */
  function heldCall() {
    let answer!: (value: unknown) => void;
    let fail!: (error: unknown) => void;
    let handed: { aborted: boolean } | undefined;
    const prev = ((_method: string, _payload: unknown, signal: { aborted: boolean }) => {
      handed = signal;
      return new Promise((resolve, reject) => {
        answer = resolve;
        fail = reject;
      });
    }) as unknown as Prev;
    return {
      prev,
      answer: (value: unknown) => answer(value),
      fail: (error: unknown) => fail(error),
      handed: () => handed,
    };
  }
  const upload = { chat_id: 1, document: new InputFile(Buffer.from("x"), "x.txt") };
  /** An upload: the calls that still go through grammY's client (`prev`). */
  const call = (prev: Prev, signal: AbortSignal) =>
    deadlineTransformer(ENDPOINT, SHORT)(prev, "sendDocument", upload, signal as never);
  const listeners = (signal: AbortSignal) => getEventListeners(signal, "abort").length;

  it("unlinks the caller's signal once the call is answered, or fails", async () => {
    const caller = new AbortController();
    const answered = heldCall();
    const first = call(answered.prev, caller.signal);
    expect(listeners(caller.signal)).toBe(1);
    answered.answer({ ok: true, result: 1 });
    await expect(first).resolves.toEqual({ ok: true, result: 1 });
    expect(listeners(caller.signal)).toBe(0);
    const failed = heldCall();
    const second = call(failed.prev, caller.signal);
    failed.fail(new Error("connection reset"));
    await expect(second).rejects.toThrow("connection reset");
    expect(listeners(caller.signal)).toBe(0);
    expect(answered.handed()?.aborted).toBe(false);
  });

  it("at the deadline fails with BotApiTimeout, aborts the call and unlinks the caller's signal", async () => {
    const caller = new AbortController();
    const held = heldCall();
    const late = call(held.prev, caller.signal);
    await expect(late).rejects.toBeInstanceOf(BotApiTimeout);
    expect(held.handed()?.aborted).toBe(true);
    expect(listeners(caller.signal)).toBe(0);
    // The aborted call's own failure, coming after, changes nothing.
    held.fail(new Error("aborted"));
    await expect(late).rejects.toMatchObject({ method: "sendDocument", deadlineMs: 400 });
  });

  it("passes the caller's abort on, before the call when it came before", async () => {
    const caller = new AbortController();
    const held = heldCall();
    void call(held.prev, caller.signal).catch(() => undefined);
    expect(held.handed()?.aborted).toBe(false);
    caller.abort();
    expect(held.handed()?.aborted).toBe(true);
    const early = heldCall();
    void call(early.prev, caller.signal).catch(() => undefined);
    expect(early.handed()?.aborted).toBe(true);
    held.fail(new Error("aborted"));
    early.fail(new Error("aborted"));
  });
});

describe("deadlines in the Telegram channel", () => {
  let harness: Harness | undefined;
  let stack: Stack | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
    await stack?.close();
    stack = undefined;
  });

  it("reports a turn's answer whose sendMessage is never answered, instead of holding the turn", async () => {
    harness = await startHarness({ deadlines: CHANNEL });
    const { tg, service } = harness;
    // More than the network retry's attempts: every one of them is left without an answer.
    tg.holdNext("sendMessage", 10);
    service.onReceive = async (_message, output) => {
      const renderer = output.beginTurn({ sessionId: "s1", turnId: "t1" });
      await renderer.handle(
        agentEvent({
          type: "turn-completed",
          status: "completed",
          iterations: 1,
          finalText: "Hello",
          usage: undefined,
        }),
      );
      await renderer.close();
    };
    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "hi" });
    await tg.waitFor(() => service.turns.length === 1);
    await Promise.all(service.turns);
    const reported = harness
      .logs()
      .filter((line) => line.msg === "telegram: could not deliver the final answer");
    expect(reported.map((line) => line.err)).toEqual([
      "sendMessage: no answer from the Bot API within 0.8 s",
    ]);
    expect(JSON.stringify(harness.logs())).not.toContain(tg.token);
    // Each attempt of the network retry had a deadline of its own.
    const attempts = tg.callsOf("sendMessage");
    expect(attempts.length).toBeGreaterThan(1);
    expect(attempts.every((call) => call.error === "held without an answer")).toBe(true);
  });

  it("sends an answer again once its first sendMessage got no answer, and it arrives once", async () => {
    stack = await startStack({ allowedUsers: [ALICE.id], channel: { deadlines: CHANNEL } });
    const { tg } = stack;
    tg.holdNext("sendMessage");
    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "hello" });
    const answer = await tg.waitFor(() => tg.state.botMessages(ALICE.id)[0]);
    expect(answer.text).toBe('You said: "hello"');
    expect(tg.callsOf("sendMessage").map((call) => call.error ?? "sent")).toEqual([
      "held without an answer",
      "sent",
    ]);
    expect(tg.state.botMessages(ALICE.id)).toHaveLength(1);
  });

  it("ends a waiting long poll at once when the channel stops (the runner's abort reaches it)", async () => {
    // A poll far longer than the test's own timeout: only the runner's abort can end it in time.
    harness = await startHarness({ pollTimeoutSeconds: 60 });
    const { tg } = harness;
    await tg.waitFor(() => tg.callsOf("getUpdates").some((call) => call.params.timeout === 60));
    await harness.channel.stop();
    expect(harness.channel.health()).toMatchObject({ ready: false, state: "stopped" });
  });

  it("refuses deadlines that are not whole positive ms within grammY's own timeout", () => {
    const options = {
      botToken: "123456:TEST-token",
      allowedUsers: [],
      allowedChats: [],
      fileMaxBytes: 1024,
      uploads: OPEN_UPLOADS,
      workspaceRoot: "/nonexistent",
      service: new ScriptedService(),
      logger: pino({ level: "silent" }),
      accessStore: memorySpace(),
      budget: storeSlotBudget(memorySpace()),
    };
    expect(() => new TelegramChannel({ ...options, deadlines: SHORT })).not.toThrow();
    for (const deadlines of [
      { ...SHORT, callMs: 0 },
      { ...SHORT, editMs: 1.5 },
      { ...SHORT, uploadMs: 600_000 },
    ]) {
      expect(() => new TelegramChannel({ ...options, deadlines })).toThrow(
        /invalid Telegram options[\s\S]*deadlines/,
      );
    }
  });
});
