/**
 * Retries of the Bot API's 429 and 5xx answers: a 429 after its retry_after (unless longer than
 * allowed), a 5xx after a doubling backoff, at most the attempts allowed; other answers, failures
 * thrown but the network's, and an aborted wait end the call. Network failures are retried within
 * each attempt (telegram-network-retry.ts), but not getUpdates'.
 */
import { GrammyError, HttpError } from "grammy";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { answerRetryTransformer } from "../../../src/channels/telegram/telegram-answer-retry.js";

const RETRY = { maxRetryAttempts: 3, maxDelaySeconds: 60 };
const OK = { ok: true as const, result: true };
const tooMany = (retryAfter: number) => ({
  ok: false as const,
  error_code: 429,
  description: `Too Many Requests: retry after ${retryAfter}`,
  parameters: { retry_after: retryAfter },
});
const serverError = { ok: false as const, error_code: 502, description: "Bad Gateway" };
const badRequest = { ok: false as const, error_code: 400, description: "Bad Request" };
const networkFailure = () =>
  new HttpError("Network request for 'sendMessage' failed!", new Error("ECONNRESET"));

/** A `prev` answering each of `answers` in turn (the last one again once they are spent), noting when. */
function answering(answers: readonly unknown[]) {
  const at: number[] = [];
  const prev = async () => {
    at.push(Date.now());
    return answers[Math.min(at.length, answers.length) - 1];
  };
  return { prev, at };
}

function call(prev: unknown, signal?: AbortSignal) {
  return answerRetryTransformer(RETRY)(prev as never, "sendMessage", {} as never, signal as never);
}

describe("answerRetryTransformer", () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("answers an ok or a refused call at once, as it came", async () => {
    const ok = answering([OK]);
    await expect(call(ok.prev)).resolves.toBe(OK);
    const refused = answering([badRequest]);
    await expect(call(refused.prev)).resolves.toBe(badRequest);
    expect([ok.at, refused.at]).toEqual([[0], [0]]);
  });

  it("tries a 429 again once its retry_after has passed", async () => {
    const rated = answering([tooMany(5), tooMany(2), OK]);
    const result = call(rated.prev);
    await vi.runAllTimersAsync();
    await expect(result).resolves.toBe(OK);
    expect(rated.at).toEqual([0, 5000, 7000]);
  });

  it("answers a 429 whose retry_after is longer than allowed at once", async () => {
    const rated = answering([tooMany(61), OK]);
    await expect(call(rated.prev)).resolves.toEqual(tooMany(61));
    expect(rated.at).toEqual([0]);
  });

  it("tries a 5xx again after 3 s, then 6, and a 429 starts that count again", async () => {
    const failing = answering([serverError, serverError, tooMany(1), OK]);
    const result = call(failing.prev);
    await vi.runAllTimersAsync();
    await expect(result).resolves.toBe(OK);
    expect(failing.at).toEqual([0, 3000, 9000, 10_000]);
    const again = answering([serverError, tooMany(1), serverError, OK]);
    const second = call(again.prev);
    await vi.runAllTimersAsync();
    await expect(second).resolves.toBe(OK);
    expect(again.at.map((at) => at - again.at[0]!)).toEqual([0, 3000, 4000, 7000]);
  });

  it("gives the last answer after the retries allowed, without waiting after it", async () => {
    const failing = answering([serverError]);
    const result = call(failing.prev);
    await vi.runAllTimersAsync();
    await expect(result).resolves.toBe(serverError);
    expect(failing.at).toEqual([0, 3000, 9000, 21_000]);
    expect(Date.now()).toBe(21_000);
  });

  it("takes a retry count below one as none, never as endless", async () => {
    for (const maxRetryAttempts of [0, -1, 0.5]) {
      const failing = answering([serverError]);
      const result = answerRetryTransformer({ maxRetryAttempts, maxDelaySeconds: 60 })(
        failing.prev as never,
        "sendMessage",
        {} as never,
        undefined as never,
      );
      await vi.advanceTimersByTimeAsync(3_600_000);
      await expect(result).resolves.toBe(serverError);
      expect(failing.at.length).toBeLessThanOrEqual(2);
    }
  });

  it("doubles a 5xx's wait up to an hour, and no further", async () => {
    const failing = answering([serverError]);
    const result = answerRetryTransformer({ maxRetryAttempts: 12, maxDelaySeconds: 60 })(
      failing.prev as never,
      "sendMessage",
      {} as never,
    );
    await vi.runAllTimersAsync();
    await expect(result).resolves.toBe(serverError);
    const waits = failing.at.slice(1).map((at, i) => (at - failing.at[i]!) / 1000);
    expect(waits).toEqual([3, 6, 12, 24, 48, 96, 192, 384, 768, 1536, 3072, 3600]);
  });

  it("passes a thrown failure that is not the network's on without retrying it", async () => {
    let calls = 0;
    const prev = async () => {
      calls++;
      throw new GrammyError("e", badRequest, "sendMessage", {});
    };
    await expect(call(prev)).rejects.toBeInstanceOf(GrammyError);
    expect(calls).toBe(1);
  });

  it("retries network failures within each attempt, and the answer they end with as any other", async () => {
    const outcomes: unknown[] = [networkFailure(), serverError, networkFailure(), networkFailure(), OK];
    const at: number[] = [];
    const prev = async () => {
      at.push(Date.now());
      const outcome = outcomes[at.length - 1];
      if (outcome instanceof Error) throw outcome;
      return outcome;
    };
    const result = call(prev);
    await vi.runAllTimersAsync();
    await expect(result).resolves.toBe(OK);
    expect(at).toHaveLength(5);
    // The 5xx's 3 s wait came after the first attempt's network retry, and before the second's.
    expect(at[2]! - at[1]!).toBe(3000);
  });

  it("ends an attempt's network retries with the network error, and does not retry getUpdates'", async () => {
    let calls = 0;
    const prev = async () => {
      calls++;
      throw networkFailure();
    };
    const result = call(prev);
    const failed = expect(result).rejects.toBeInstanceOf(HttpError);
    await vi.runAllTimersAsync();
    await failed;
    expect(calls).toBe(4);
    calls = 0;
    const polling = answerRetryTransformer(RETRY)(prev as never, "getUpdates", {} as never);
    await expect(polling).rejects.toBeInstanceOf(HttpError);
    expect(calls).toBe(1);
  });

  it("ends a wait when the call is aborted, and does not wait for a call aborted already", async () => {
    const controller = new AbortController();
    const rated = answering([tooMany(30), OK]);
    const result = call(rated.prev, controller.signal);
    const failed = expect(result).rejects.toThrow("Request aborted while waiting between retries");
    await vi.advanceTimersByTimeAsync(1000);
    controller.abort();
    await failed;
    await vi.runAllTimersAsync();
    expect(rated.at).toEqual([0]);
    const late = answering([tooMany(30), OK]);
    await expect(call(late.prev, controller.signal)).rejects.toThrow("aborted");
    expect(late.at).toEqual([1000]);
  });
});
