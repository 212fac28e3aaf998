/** Telegram connection failures by kind: rejected token, conflict, rate limit, unreachable API. */
import { GrammyError, HttpError } from "grammy";
import { describe, expect, it } from "vitest";
import { BotApiTimeout } from "../../../src/channels/telegram/telegram-deadlines.js";
import { telegramFailure } from "../../../src/channels/telegram/telegram-failure.js";

function apiError(code: number, description: string): GrammyError {
  return new GrammyError(description, { ok: false, error_code: code, description }, "getMe", {});
}

describe("telegramFailure", () => {
  it("tells a rejected token, a conflict, a rate limit and an unreachable API apart", () => {
    expect(telegramFailure(apiError(401, "Unauthorized"), "getMe")).toMatchObject({
      kind: "rejected",
      reason: "getMe: 401 Unauthorized",
    });
    expect(telegramFailure(apiError(404, "Not Found"), "getMe").kind).toBe("rejected");
    expect(telegramFailure(apiError(409, "Conflict"), "getMe").fix).toContain("stop the other process");
    expect(telegramFailure(apiError(429, "Too Many Requests"), "getMe").kind).toBe("rate-limited");
    expect(telegramFailure(apiError(502, "Bad Gateway"), "getMe").kind).toBe("unreachable");
  });

  it("never quotes the token-bearing URL of a network failure", () => {
    const fetchError = Object.assign(
      new Error("request to http://127.0.0.1:1/bot123:AAsecret/getMe failed, reason: connect ECONNREFUSED"),
      { code: "ECONNREFUSED" },
    );
    const failure = telegramFailure(
      new HttpError("Network request for 'getMe' failed!", fetchError),
      "getMe",
    );
    expect(failure.kind).toBe("unreachable");
    expect(failure.line()).not.toContain("AAsecret");
    expect(failure.reason).toBe("getMe: ECONNREFUSED");
  });

  it("reads a call past its deadline as an unreachable API that timed out", () => {
    expect(telegramFailure(new BotApiTimeout("getMe", 30_000), "getMe")).toMatchObject({
      kind: "unreachable",
      reason: "getMe: ETIMEDOUT",
    });
  });
});
