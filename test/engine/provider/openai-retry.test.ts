/** OpenAIProvider retries 429 / 5xx / connection failures before any output, and never after. */
import nock from "nock";
import { beforeEach, describe, expect, it } from "vitest";
import { abortableSleep, RETRY_AFTER_CAP_MS } from "../../../src/engine/provider/openai-provider.js";
import { ProviderError } from "../../../src/engine/provider/provider.js";
import {
  BASE_URL,
  chunk,
  collect,
  finished,
  HOST,
  hangingStream,
  isolateNetwork,
  PATH,
  request,
  SSE_HEADERS,
  sse,
  testProvider,
} from "./sse-helpers.js";

beforeEach(isolateNetwork);

const OK = sse(chunk({ content: "fine" }), chunk({}, "stop"));
const RATE_LIMITED = {
  error: { message: "Rate limit reached", type: "requests", code: "rate_limit_exceeded" },
};
const NOW = Date.parse("2026-10-21T07:28:00Z");

describe("OpenAIProvider retries", () => {
  it.each([
    ["seconds", { "retry-after": "2" }, 2_000],
    ["an HTTP date", { "retry-after": "Wed, 21 Oct 2026 07:28:05 GMT" }, 5_000],
    ["milliseconds", { "retry-after-ms": "750" }, 750],
    ["too long a wait (capped)", { "retry-after": "3600" }, RETRY_AFTER_CAP_MS],
  ])("retries a 429 after the Retry-After given in %s", async (_, headers, expectedWait) => {
    const scope = nock(HOST)
      .post(PATH)
      .reply(429, RATE_LIMITED, headers)
      .post(PATH)
      .reply(200, OK, SSE_HEADERS);
    const { provider, waits } = testProvider({ now: () => NOW });
    const { events, error } = await collect(provider.stream(request()));
    expect(error).toBeUndefined();
    expect(finished(events).text).toBe("fine");
    expect(waits).toEqual([expectedWait]);
    expect(scope.isDone()).toBe(true);
  });

  it("retries 5xx with exponential backoff until it succeeds", async () => {
    const scope = nock(HOST)
      .post(PATH)
      .reply(503, { error: { message: "overloaded" } })
      .post(PATH)
      .reply(502, "<html>Bad gateway</html>")
      .post(PATH)
      .reply(200, OK, SSE_HEADERS);
    const { provider, waits } = testProvider();
    const { events } = await collect(provider.stream(request()));
    expect(finished(events).text).toBe("fine");
    expect(waits).toEqual([500, 1_000]);
    expect(scope.isDone()).toBe(true);
  });

  it("gives up after maxRetries with a friendly server error", async () => {
    const scope = nock(HOST)
      .post(PATH)
      .times(3)
      .reply(500, { error: { message: "boom" } });
    const { provider, waits } = testProvider({ maxRetries: 2 });
    const { error } = await collect(provider.stream(request()));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ kind: "server", status: 500, recoverable: true });
    expect((error as Error).message).toBe(
      "The model endpoint had a server error (HTTP 500). Try again shortly.",
    );
    expect(waits).toEqual([500, 1_000]);
    expect(scope.isDone()).toBe(true);
  });

  it("retries a refused connection, then names the base URL", async () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:11434"), {
      code: "ECONNREFUSED",
    });
    const scope = nock(HOST).post(PATH).times(2).replyWithError(refused);
    const { provider, waits } = testProvider({ maxRetries: 1 });
    const { error } = await collect(provider.stream(request()));
    expect(error).toMatchObject({ kind: "connection" });
    expect((error as Error).message).toBe(
      `Could not connect to the model endpoint at ${BASE_URL} (ECONNREFUSED).`,
    );
    expect(waits).toEqual([500]);
    expect(scope.isDone()).toBe(true);
  });

  it("never retries once output has streamed: the error surfaces after one request", async () => {
    const body = hangingStream(chunk({ role: "assistant", content: "" }), chunk({ content: "Hello" }));
    const scope = nock(HOST)
      .post(PATH)
      .reply(200, () => body, SSE_HEADERS)
      .post(PATH)
      .reply(200, OK, SSE_HEADERS);
    const { provider, waits } = testProvider();
    const { events, error } = await collect(provider.stream(request()), () => {
      body.destroy(Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }));
    });
    expect(events).toEqual([{ type: "text-delta", delta: "Hello" }]);
    expect(error).toMatchObject({ kind: "connection" });
    expect((error as Error).message).toBe(
      `The connection to the model endpoint at ${BASE_URL} dropped mid-response.`,
    );
    expect(waits).toEqual([]);
    expect(scope.pendingMocks()).toHaveLength(1);
  });

  it("stops waiting out a backoff as soon as the request is aborted", async () => {
    const controller = new AbortController();
    const scope = nock(HOST)
      .post(PATH)
      .reply(429, RATE_LIMITED, { "retry-after": "30" })
      .post(PATH)
      .reply(200, OK, SSE_HEADERS);
    const waits: number[] = [];
    const { provider } = testProvider({
      sleep: (ms, signal) => {
        waits.push(ms);
        const sleeping = abortableSleep(ms, signal);
        controller.abort();
        return sleeping;
      },
    });
    const { error } = await collect(provider.stream(request({ signal: controller.signal })));
    expect(waits).toEqual([30_000]);
    expect(error).toMatchObject({ kind: "aborted", message: "The model request was cancelled." });
    expect(scope.pendingMocks()).toHaveLength(1);
  });
});
