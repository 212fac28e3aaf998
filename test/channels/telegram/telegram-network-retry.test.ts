/**
 * Network failures of Bot API calls: a dropped connection is retried a few times (so a turn's
 * answer is not lost to it), Telegram's own refusals and getUpdates are not, and the retries end —
 * by the lookup client's networkRetryTransformer here, and through the bot client's whole call
 * stack (where the answer retry runs them: telegram-answer-retry.test.ts) at the end.
 */
import { GrammyError, HttpError } from "grammy";
import { afterEach, describe, expect, it } from "vitest";
import { networkRetryTransformer } from "../../../src/channels/telegram/telegram-network-retry.js";
import { ALICE, ALICE_DM } from "./harness.js";
import { type Stack, startStack } from "./stack.js";

const FAST = { retries: 3, firstWaitMs: 1 };

/** A `prev` for the transformer that throws each of `failures` in turn, then answers ok. */
function failingCall(failures: Error[]) {
  let calls = 0;
  const prev = async () => {
    const failure = failures[calls++];
    if (failure) throw failure;
    return { ok: true as const, result: true };
  };
  return { prev, calls: () => calls };
}

const networkFailure = () =>
  new HttpError("Network request for 'sendMessage' failed!", new Error("ECONNRESET"));

describe("networkRetryTransformer", () => {
  it("tries a call again after network failures, and answers with its result", async () => {
    const call = failingCall([networkFailure(), networkFailure()]);
    const result = await networkRetryTransformer(FAST)(call.prev as never, "sendMessage", {} as never);
    expect(result).toEqual({ ok: true, result: true });
    expect(call.calls()).toBe(3);
  });

  it("gives up after its retries with the network error", async () => {
    const call = failingCall(Array.from({ length: 10 }, networkFailure));
    await expect(
      networkRetryTransformer(FAST)(call.prev as never, "sendMessage", {} as never),
    ).rejects.toBeInstanceOf(HttpError);
    expect(call.calls()).toBe(4);
  });

  it("does not retry Telegram's own refusals, getUpdates, or an aborted call", async () => {
    const refused = failingCall([
      new GrammyError("e", { ok: false, error_code: 400, description: "Bad Request" }, "sendMessage", {}),
    ]);
    await expect(
      networkRetryTransformer(FAST)(refused.prev as never, "sendMessage", {} as never),
    ).rejects.toBeInstanceOf(GrammyError);
    expect(refused.calls()).toBe(1);
    const polling = failingCall([networkFailure()]);
    await expect(
      networkRetryTransformer(FAST)(polling.prev as never, "getUpdates", {} as never),
    ).rejects.toBeInstanceOf(HttpError);
    expect(polling.calls()).toBe(1);
    const aborted = failingCall([networkFailure()]);
    const controller = new AbortController();
    controller.abort();
    await expect(
      networkRetryTransformer(FAST)(
        aborted.prev as never,
        "sendMessage",
        {} as never,
        controller.signal as never,
      ),
    ).rejects.toBeInstanceOf(HttpError);
    expect(aborted.calls()).toBe(1);
  });
});

describe("a Telegram answer whose connection drops", () => {
  let stack: Stack | undefined;
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  it("still reaches the person, once", async () => {
    stack = await startStack({ allowedUsers: [ALICE.id] });
    const { tg } = stack;
    tg.dropNext("sendMessage");
    tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "hello" });
    const answer = await tg.waitFor(() => tg.state.botMessages(ALICE.id)[0]);
    expect(answer.text).toBe('You said: "hello"');
    expect(tg.callsOf("sendMessage").map((call) => call.error ?? "sent")).toEqual([
      "connection dropped",
      "sent",
    ]);
    expect(tg.state.botMessages(ALICE.id)).toHaveLength(1);
  });
});
