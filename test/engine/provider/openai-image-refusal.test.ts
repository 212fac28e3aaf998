/**
 * OpenAIProvider tells an endpoint refusing the request's images by the server's words, whatever
 * the status and inside an open stream: Ollama's 500 for a text-only model, vLLM's 400 "is not a
 * multimodal model" (also sent mid-stream), OpenRouter's 404 and its mid-stream error chunk. Such
 * a refusal is final (no retry could change it); a 500 or a 404 in other words stays what it was.
 * Only where a refusal can be: a 429 or a 503 that mentions an image keeps its retries, a 500 is
 * the model's refusal only in a known server's exact words, and so is an error inside a stream.
 */
import nock from "nock";
import { beforeEach, describe, expect, it } from "vitest";
import { ImageRefusalError } from "../../../src/engine/provider/image-refusal.js";
import { ProviderError } from "../../../src/engine/provider/provider.js";
import {
  chunk,
  collect,
  HOST,
  isolateNetwork,
  PATH,
  request,
  SSE_HEADERS,
  sse,
  testProvider,
} from "./sse-helpers.js";

beforeEach(isolateNetwork);

const OLLAMA_TEXT_ONLY =
  "Failed to create new sequence: failed to process inputs: this model is missing data required for image input";

/** A failed answer: its HTTP status, the error message in its body, and any headers. */
interface Failure {
  readonly status: number;
  readonly message: string;
  readonly headers?: Record<string, string>;
}

/**
 * Answers each failure in turn, then a stream saying "ok"; streams one request and returns what
 * came back, the backoff waits, and the answers never asked for.
 */
async function streamAfterFailures(...failures: Failure[]) {
  const scope = nock(HOST);
  for (const { status, message, headers } of failures) {
    scope.post(PATH).reply(status, { error: { message } }, headers);
  }
  scope.post(PATH).reply(200, sse(chunk({ content: "ok" }, "stop")), SSE_HEADERS);
  const { provider, waits } = testProvider();
  const { events, error } = await collect(provider.stream(request()));
  return { events, error, waits, unasked: scope.pendingMocks() };
}

/** The error a stream ends with when it opens with `opening` and then sends `errorEvent`. */
async function midStreamError(errorEvent: object, opening: object = chunk({ content: "" })) {
  nock(HOST).post(PATH).reply(200, sse(opening, errorEvent), SSE_HEADERS);
  return (await collect(testProvider().provider.stream(request()))).error;
}

describe("OpenAIProvider image refusals", () => {
  it("takes Ollama's HTTP 500 for an image sent to a text-only model as the model's refusal, without retrying", async () => {
    const scope = nock(HOST)
      .post(PATH)
      .reply(500, { error: { message: OLLAMA_TEXT_ONLY, type: "api_error" } })
      .post(PATH)
      .reply(200, sse(chunk({ content: "never asked" }, "stop")), SSE_HEADERS);
    const { provider, waits } = testProvider();
    const { error } = await collect(provider.stream(request()));
    expect(error).toBeInstanceOf(ImageRefusalError);
    expect(error).toMatchObject({ about: "model", kind: "bad_request", status: 500, recoverable: false });
    expect((error as Error).message).toBe(
      `The model endpoint rejected the request (HTTP 500): ${OLLAMA_TEXT_ONLY}`,
    );
    expect(waits).toEqual([]);
    expect(scope.pendingMocks()).toHaveLength(1);
  });

  it("keeps a 500 in other words a server error, retried, even when it mentions an image", async () => {
    const { events, error, waits } = await streamAfterFailures({
      status: 500,
      message: "image preprocessing worker crashed",
    });
    expect(error).toBeUndefined();
    expect(events.at(-1)).toMatchObject({ type: "step-finished", text: "ok" });
    expect(waits).toEqual([500]);
  });

  it("reads vLLM's 400 'is not a multimodal model' and OpenRouter's 404 as the model's refusal", async () => {
    nock(HOST)
      .post(PATH)
      .reply(400, { object: "error", message: "Qwen/Qwen3-8B is not a multimodal model None", code: 400 })
      .post(PATH)
      .reply(404, { error: { code: 404, message: "No endpoints found that support image input" } });
    const { provider } = testProvider();
    const vllm = await collect(provider.stream(request()));
    expect(vllm.error).toMatchObject({ about: "model", status: 400 });
    const openRouter = await collect(provider.stream(request()));
    expect(openRouter.error).toMatchObject({ about: "model", status: 404 });
    expect((openRouter.error as Error).message).toBe(
      "The model endpoint rejected the request (HTTP 404): No endpoints found that support image input",
    );
  });

  it("keeps a 404 in other words a missing model", async () => {
    nock(HOST)
      .post(PATH)
      .reply(404, { error: { message: "model 'llava' not found" } });
    const { error } = await collect(testProvider().provider.stream(request()));
    expect(error).not.toBeInstanceOf(ImageRefusalError);
    expect((error as Error).message).toMatch(/^Model "test-model" was not found/);
  });

  it("takes vLLM's error chunk after the stream began as a refusal of an image it could not read", async () => {
    const scope = nock(HOST)
      .post(PATH)
      .reply(
        200,
        sse(chunk({ role: "assistant", content: "" }), {
          error: {
            object: "error",
            message: "cannot identify image file <_io.BytesIO object at 0x7f>",
            type: "BadRequestError",
            code: 400,
          },
        }),
        SSE_HEADERS,
      )
      .post(PATH)
      .reply(200, sse(chunk({}, "stop")), SSE_HEADERS);
    const { provider, waits } = testProvider();
    const { events, error } = await collect(provider.stream(request()));
    expect(events).toEqual([]);
    expect(error).toBeInstanceOf(ImageRefusalError);
    expect(error).toMatchObject({ about: "image", status: undefined, recoverable: false });
    expect((error as Error).message).toBe(
      "The model endpoint refused the request mid-response: cannot identify image file <_io.BytesIO object at 0x7f>",
    );
    expect(waits).toEqual([]);
    expect(scope.pendingMocks()).toHaveLength(1);
  });

  it("takes OpenRouter's mid-stream error chunk about image input as the model's refusal", async () => {
    const error = await midStreamError(
      {
        ...chunk({ content: "" }, "error"),
        error: { code: 400, message: "Provider returned error: this model does not support image input" },
      },
      chunk({ role: "assistant", content: "" }),
    );
    expect(error).toMatchObject({ about: "model", kind: "bad_request" });
  });

  it("keeps a mid-stream error in other words a server error", async () => {
    const error = await midStreamError({ error: { code: 502, message: "upstream image cache timeout" } });
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).not.toBeInstanceOf(ImageRefusalError);
    expect(error).toMatchObject({ kind: "server" });
  });

  it("retries a 503 that mentions processing an image, as the transient server error it is", async () => {
    const { events, error, waits, unasked } = await streamAfterFailures({
      status: 503,
      message: "unable to process image batch: vision worker overloaded, please retry",
    });
    expect(error).toBeUndefined();
    expect(events.at(-1)).toMatchObject({ type: "step-finished", text: "ok" });
    expect(waits).toHaveLength(1);
    expect(unasked).toEqual([]);
  });

  it("retries a 429 that mentions an image after its Retry-After", async () => {
    const { events, error, waits } = await streamAfterFailures({
      status: 429,
      message: "Too many requests: could not load image quota",
      headers: { "retry-after": "1" },
    });
    expect(error).toBeUndefined();
    expect(events.at(-1)).toMatchObject({ type: "step-finished", text: "ok" });
    expect(waits).toEqual([1000]);
  });

  it("never takes a 502 or 504 in a known server's words as a refusal", async () => {
    const { error, waits } = await streamAfterFailures(
      { status: 502, message: OLLAMA_TEXT_ONLY },
      { status: 504, message: "cannot identify image file" },
    );
    expect(error).toBeUndefined();
    expect(waits).toHaveLength(2);
  });

  it("keeps a 500 about an image it could not decode a retried server error: only a 400 or 422 says that", async () => {
    const { error, waits } = await streamAfterFailures(
      { status: 500, message: "failed to decode image: worker crashed" },
      { status: 500, message: "vision input is not supported right now" },
    );
    expect(error).toBeUndefined();
    expect(waits).toHaveLength(2);
  });

  it("still takes a 400 or 422 in any wording about an image as a refusal", async () => {
    nock(HOST)
      .post(PATH)
      .reply(400, { error: { message: "failed to decode image: not a PNG" } })
      .post(PATH)
      .reply(422, { error: { message: "vision input is not supported for this model" } });
    const { provider } = testProvider();
    expect((await collect(provider.stream(request()))).error).toMatchObject({ about: "image", status: 400 });
    expect((await collect(provider.stream(request()))).error).toMatchObject({ about: "model", status: 422 });
  });

  it("keeps a mid-stream error in no known server's words a server error, even when it mentions an image", async () => {
    const error = await midStreamError({
      error: { message: "unable to process image batch: worker overloaded" },
    });
    expect(error).not.toBeInstanceOf(ImageRefusalError);
    expect(error).toMatchObject({ kind: "server" });
  });
});
