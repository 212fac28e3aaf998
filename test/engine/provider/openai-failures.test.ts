/** OpenAIProvider maps HTTP failures to friendly errors, detects overflow, stalls and aborts. */
import nock from "nock";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { registerSecret } from "../../../src/logging/redact.js";
import { ContextOverflowError, ProviderError } from "../../../src/engine/provider/provider.js";
import {
  BASE_URL,
  chunk,
  collect,
  HOST,
  hangingStream,
  isolateNetwork,
  PATH,
  request,
  SSE_HEADERS,
  sse,
  testProvider,
} from "./sse-helpers.js";

const openStreams: { destroy(): void }[] = [];
beforeEach(isolateNetwork);
afterEach(() => {
  for (const stream of openStreams.splice(0)) stream.destroy();
});

function hanging(...payloads: object[]) {
  const stream = hangingStream(...payloads);
  openStreams.push(stream);
  return stream;
}

describe("OpenAIProvider HTTP errors", () => {
  it.each([401, 403])("says the endpoint rejected the API key on %i, without retrying", async (status) => {
    const scope = nock(HOST)
      .post(PATH)
      .reply(status, { error: { message: "Incorrect API key provided: sk-abc…", code: "invalid_api_key" } });
    const { provider, waits } = testProvider();
    const { error } = await collect(provider.stream(request()));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ kind: "auth", status, recoverable: false });
    expect((error as Error).message).toMatch(/^The model endpoint rejected the API key \(HTTP \d+\)\./);
    expect((error as Error).message).not.toContain("sk-abc");
    expect(waits).toEqual([]);
    expect(scope.isDone()).toBe(true);
  });

  it("takes a registered API key out of what it quotes, whatever the key's shape, and an endpoint's query", async () => {
    // The app registers the configured key at start (config/config-secrets.ts); the provider does not.
    registerSecret("gsk_live_0123456789abcdef");
    nock(HOST)
      .post(PATH)
      .reply(400, { error: { message: "key gsk_live_0123456789abcdef is not allowed for this model" } });
    const { provider } = testProvider({ apiKey: "gsk_live_0123456789abcdef" });
    const { error } = await collect(provider.stream(request()));
    expect((error as Error).message).toBe(
      "The model endpoint rejected the request (HTTP 400): key [redacted] is not allowed for this model",
    );
    const queried = testProvider({ baseURL: "http://127.0.0.1:9/v1?api_key=0a1b2c3d4e5f" }).provider;
    const refused = await collect(queried.stream(request()));
    expect((refused.error as Error).message).toBe(
      "Could not connect to the model endpoint at http://127.0.0.1:9/v1?[redacted].",
    );
  });

  it("shows the endpoint without the password its URL carries", async () => {
    // Nothing answers there (the network is isolated): the failure names the endpoint.
    const { provider } = testProvider({ baseURL: "http://proxy-user:hunter2-secret@127.0.0.1:9/v1" });
    const { error } = await collect(provider.stream(request({ model: "m" })));
    expect((error as Error).message).toBe(
      "Could not connect to the model endpoint at http://proxy-user:[redacted]@127.0.0.1:9/v1.",
    );
  });

  it("names the model on a 404", async () => {
    nock(HOST).post(PATH).reply(404, { error: "model 'qwen3:99b' not found" });
    const { provider } = testProvider();
    const { error } = await collect(provider.stream(request({ model: "qwen3:99b" })));
    expect(error).toMatchObject({ kind: "bad_request", status: 404 });
    expect((error as Error).message).toBe(
      `Model "qwen3:99b" was not found at ${BASE_URL} (HTTP 404). Check the model name and base URL.`,
    );
  });

  it("maps a 400 context_length_exceeded (OpenAI shape) to ContextOverflowError", async () => {
    nock(HOST)
      .post(PATH)
      .reply(400, {
        error: {
          message:
            "This model's maximum context length is 128000 tokens. However, your messages resulted in 130401 tokens. Please reduce the length of the messages.",
          type: "invalid_request_error",
          param: "messages",
          code: "context_length_exceeded",
        },
      });
    const { provider } = testProvider();
    const { error } = await collect(provider.stream(request()));
    expect(error).toBeInstanceOf(ContextOverflowError);
    expect(error).toMatchObject({ kind: "context_overflow", recoverable: true });
  });

  it("maps a vLLM 400 overflow (top-level error object, numeric code) to ContextOverflowError", async () => {
    nock(HOST).post(PATH).reply(400, {
      object: "error",
      message:
        "This model's maximum context length is 32768 tokens. However, you requested 33000 tokens (32000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.",
      type: "BadRequestError",
      param: null,
      code: 400,
    });
    const { provider } = testProvider();
    const { error } = await collect(provider.stream(request()));
    expect(error).toBeInstanceOf(ContextOverflowError);
  });

  it.each([
    ["Gemini", "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576)."],
    [
      "TGI",
      "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 4000 `inputs` tokens and 500 `max_new_tokens`",
    ],
    ["TGI (inputs)", "Input validation error: `inputs` must have less than 4000 tokens. Given: 4100"],
    [
      "vLLM (newer)",
      "The decoder prompt (length 40000) is longer than the maximum model length of 32768. Make sure that `max_model_len` is no smaller than the number of text tokens.",
    ],
    ["vLLM (input)", "Input prompt (40000 tokens) is too long and exceeds limit of 32768"],
    ["Ollama", "the input length exceeds the context length"],
    ["Bedrock", "Input is too long for requested model."],
    ["advice only", "Please reduce the length of the messages."],
  ])("maps a 400 overflow worded as %s words it to ContextOverflowError", async (_server, message) => {
    nock(HOST)
      .post(PATH)
      .reply(400, { error: { code: 400, message, status: "INVALID_ARGUMENT" } });
    const { provider } = testProvider();
    const { error } = await collect(provider.stream(request()));
    expect(error).toBeInstanceOf(ContextOverflowError);
  });

  it.each([
    ["TGI's max_new_tokens", 422, "Input validation error: `max_new_tokens` must be <= 2048. Given: 4096"],
    ["a max_tokens bound", 400, "max_tokens must be <= 8192"],
  ])(
    "keeps %s above the server's limit a bad request with its reason, not an overflow",
    async (_l, status, message) => {
      nock(HOST).post(PATH).reply(status, { error: { message } });
      const { provider } = testProvider();
      const { error } = await collect(provider.stream(request()));
      expect(error).not.toBeInstanceOf(ContextOverflowError);
      expect(error).toMatchObject({ kind: "bad_request", recoverable: false });
      expect((error as Error).message).toBe(
        `The model endpoint rejected the request (HTTP ${status}): ${message}`,
      );
    },
  );

  it("maps Gemini's overflow sent as a one-element array of errors to ContextOverflowError", async () => {
    const message = "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).";
    nock(HOST)
      .post(PATH)
      .reply(400, [{ error: { code: 400, message, status: "INVALID_ARGUMENT" } }]);
    const { provider } = testProvider();
    const { error } = await collect(provider.stream(request()));
    expect(error).toBeInstanceOf(ContextOverflowError);
  });

  it("maps any 413 (a proxy's Request Entity Too Large page) to ContextOverflowError", async () => {
    nock(HOST).post(PATH).reply(413, "<html><h1>413 Request Entity Too Large</h1></html>");
    const { provider, waits } = testProvider();
    const { error } = await collect(provider.stream(request()));
    expect(error).toBeInstanceOf(ContextOverflowError);
    expect(waits).toEqual([]);
  });

  it("keeps the server's reason for any other 400", async () => {
    nock(HOST).post(PATH).reply(400, {
      object: "error",
      message: '"auto" tool choice requires --enable-auto-tool-choice',
      code: 400,
    });
    const { provider } = testProvider();
    const { error } = await collect(provider.stream(request()));
    expect(error).not.toBeInstanceOf(ContextOverflowError);
    expect(error).toMatchObject({ kind: "bad_request", recoverable: false });
    expect((error as Error).message).toBe(
      'The model endpoint rejected the request (HTTP 400): "auto" tool choice requires --enable-auto-tool-choice',
    );
  });

  it("takes its own API key out of an error the server sends inside an open stream", async () => {
    nock(HOST)
      .post(PATH)
      .reply(
        200,
        sse(chunk({ content: "Hi" }), {
          object: "error",
          message: "upstream refused key mst_live_4f9a2c7d81e6b3",
        }),
        SSE_HEADERS,
      );
    registerSecret("mst_live_4f9a2c7d81e6b3"); // as the app does at start with the configured key
    const { provider } = testProvider({ apiKey: "mst_live_4f9a2c7d81e6b3" });
    const { error } = await collect(provider.stream(request()));
    expect((error as Error).message).toBe(
      "The model endpoint reported an error mid-response: upstream refused key [redacted]",
    );
  });

  it("scrubs what it quotes of the server: a key a proxy echoes back never reaches the thread", async () => {
    nock(HOST)
      .post(PATH)
      .reply(400, { error: { message: "bad header Authorization: Bearer sk-proj-abcdefghijklmnop1234" } });
    const { provider } = testProvider();
    const { error } = await collect(provider.stream(request()));
    expect((error as Error).message).toBe(
      "The model endpoint rejected the request (HTTP 400): bad header Authorization: Bearer [redacted]",
    );
  });

  it("never leaves half an emoji where it cuts the server's reason", async () => {
    // The cut at 199 falls between the emoji's two halves: the whole emoji is left off.
    nock(HOST)
      .post(PATH)
      .reply(400, { error: { message: `${"e".repeat(198)}😀 and the rest` } });
    const { provider } = testProvider();
    const { error } = await collect(provider.stream(request()));
    expect((error as Error).message).toBe(
      `The model endpoint rejected the request (HTTP 400): ${"e".repeat(198)}…`,
    );
  });

  it("treats a 429 for exhausted quota as final, not as a rate limit to wait out", async () => {
    nock(HOST)
      .post(PATH)
      .reply(429, { error: { message: "You exceeded your current quota", code: "insufficient_quota" } });
    const { provider, waits } = testProvider();
    const { error } = await collect(provider.stream(request()));
    expect(error).toMatchObject({ kind: "auth", status: 429 });
    expect(waits).toEqual([]);
  });
});

/**
 * The stall timeout of these tests: long enough that a loaded host's pause between a response's
 * headers and its first chunk is not taken for a stall (40 ms was, once), short enough to wait out.
 */
const STALL_MS = 400;

describe("OpenAIProvider stalls and aborts", () => {
  it("aborts a stream that goes silent after its first chunk and reports 'stalled'", async () => {
    const scope = nock(HOST)
      .post(PATH)
      .reply(
        200,
        () => hanging(chunk({ role: "assistant", content: "" }), chunk({ content: "Thinking" })),
        SSE_HEADERS,
      );
    const { provider, waits } = testProvider({ stallTimeoutMs: STALL_MS });
    const { events, error } = await collect(provider.stream(request()));
    expect(events).toEqual([{ type: "text-delta", delta: "Thinking" }]);
    expect(error).toMatchObject({ kind: "stalled" });
    expect((error as Error).message).toBe(
      `The model sent nothing of its reply for ${STALL_MS} ms, so the request was cancelled.`,
    );
    expect(waits).toEqual([]);
    expect(scope.isDone()).toBe(true);
  });

  it("reports 'stalled' when only chunks that carry nothing of the reply keep coming", async () => {
    const stream = hanging(chunk({ content: "Thinking" }));
    // Keep-alives of every kind a broken server might send: empty, no choices, another choice,
    // a bare role on choice 0. GUARD of them (several seconds' worth) and the server goes quiet.
    const keepAlives = [
      {},
      { ...chunk({}), choices: [] },
      { ...chunk({}), choices: [{ index: 1, delta: { content: "other" }, finish_reason: null }] },
      chunk({ role: "assistant", content: "" }),
    ];
    const GUARD = 2_500;
    let sent = 0;
    const timer = setInterval(() => {
      if (sent >= GUARD) return clearInterval(timer);
      stream.write(`data: ${JSON.stringify(keepAlives[sent % keepAlives.length])}\n\n`);
      sent++;
    }, 2);
    try {
      nock(HOST)
        .post(PATH)
        .reply(200, () => stream, SSE_HEADERS);
      const { provider } = testProvider({ stallTimeoutMs: STALL_MS });
      const { events, error } = await collect(provider.stream(request()));
      expect(events).toEqual([{ type: "text-delta", delta: "Thinking" }]);
      expect(error).toMatchObject({ kind: "stalled" });
      // Ended by the stall timer while the keep-alives still came, not after they ran out.
      expect(sent).toBeGreaterThan(0);
      expect(sent).toBeLessThan(GUARD);
    } finally {
      clearInterval(timer);
    }
  });

  it("stops a stream that keeps dripping its reply past maxStepMs in all, though never stalling", async () => {
    const stream = hanging(chunk({ content: "a" }));
    // One character every few ms: each restarts the stall timer, and the stream never ends.
    const drip = setInterval(() => stream.write(`data: ${JSON.stringify(chunk({ content: "a" }))}\n\n`), 5);
    try {
      nock(HOST)
        .post(PATH)
        .reply(200, () => stream, SSE_HEADERS);
      const { provider, waits } = testProvider({ stallTimeoutMs: 60_000, maxStepMs: STALL_MS });
      const { events, error } = await collect(provider.stream(request()));
      expect(events.length).toBeGreaterThan(0);
      expect(error).toMatchObject({
        kind: "timeout",
        message: `The model kept streaming for over ${STALL_MS} ms, so the request was stopped.`,
      });
      expect(waits).toEqual([]);
    } finally {
      clearInterval(drip);
    }
  });

  it("still completes a step whose finish reason arrived before the server went silent", async () => {
    nock(HOST)
      .post(PATH)
      .reply(200, () => hanging(chunk({ content: "Done." }), chunk({}, "stop")), SSE_HEADERS);
    const { provider } = testProvider({ stallTimeoutMs: STALL_MS });
    const { events, error } = await collect(provider.stream(request()));
    expect(error).toBeUndefined();
    expect(events.at(-1)).toMatchObject({ type: "step-finished", text: "Done.", finishReason: "stop" });
  });

  it("reports 'stalled' when the server sends no response at all", async () => {
    nock(HOST).post(PATH).delay(5_000).reply(200, "", SSE_HEADERS);
    const { provider } = testProvider({ stallTimeoutMs: STALL_MS });
    const { error } = await collect(provider.stream(request()));
    expect(error).toMatchObject({ kind: "stalled" });
  });

  it("does not count the consumer's own time as a stall", async () => {
    const body = hanging(chunk({ content: "a" }));
    nock(HOST)
      .post(PATH)
      .reply(200, () => body, SSE_HEADERS);
    const { provider } = testProvider({ stallTimeoutMs: STALL_MS });
    const iterator = provider.stream(request())[Symbol.asyncIterator]();
    expect(await iterator.next()).toMatchObject({ value: { type: "text-delta", delta: "a" } });
    await new Promise((resolve) => setTimeout(resolve, STALL_MS * 2)); // a slow consumer, longer than the stall timeout
    body.end(`data: ${JSON.stringify(chunk({}, "stop"))}\n\ndata: [DONE]\n\n`);
    expect(await iterator.next()).toMatchObject({ value: { type: "step-finished", text: "a" } });
  });

  it("aborts mid-stream at once when the request signal fires", async () => {
    const controller = new AbortController();
    nock(HOST)
      .post(PATH)
      .reply(200, () => hanging(chunk({ content: "Once upon" })), SSE_HEADERS);
    const { provider } = testProvider();
    const { events, error } = await collect(provider.stream(request({ signal: controller.signal })), () =>
      controller.abort(),
    );
    expect(events).toEqual([{ type: "text-delta", delta: "Once upon" }]);
    expect(error).toMatchObject({ kind: "aborted", message: "The model request was cancelled." });
  });

  it("does not send a request whose signal is already aborted", async () => {
    const scope = nock(HOST).post(PATH).reply(200, "", SSE_HEADERS);
    const { provider } = testProvider();
    const { error } = await collect(provider.stream(request({ signal: AbortSignal.abort() })));
    expect(error).toMatchObject({ kind: "aborted" });
    expect(scope.isDone()).toBe(false);
  });
});
