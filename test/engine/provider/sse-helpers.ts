/**
 * Helpers for the provider tests: real-shaped chat.completion.chunk payloads, SSE bodies for
 * nock to replay, a hanging SSE stream, a provider wired to a nock host with recorded backoff
 * waits, and a collector that captures events and the error a stream ended with.
 */
import { PassThrough } from "node:stream";
import nock from "nock";
import { OpenAIProvider, type OpenAIProviderOptions } from "../../../src/engine/provider/openai-provider.js";
import type { ProviderRequest, ProviderStreamEvent } from "../../../src/engine/provider/provider.js";

export const HOST = "http://model.test";
export const BASE_URL = `${HOST}/v1`;
export const PATH = "/v1/chat/completions";
export const SSE_HEADERS = { "content-type": "text/event-stream" };

let created = 1_760_000_000;

/** One streamed chunk with a single choice. */
export function chunk(delta: object, finishReason: string | null = null): object {
  created += 1;
  return {
    id: "chatcmpl-test",
    object: "chat.completion.chunk",
    created,
    model: "test-model",
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  };
}

/** The trailing usage chunk `stream_options.include_usage` adds. */
export function usageChunk(prompt: number, completion: number): object {
  return {
    id: "chatcmpl-test",
    object: "chat.completion.chunk",
    created,
    model: "test-model",
    choices: [],
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
  };
}

/** An SSE body: one `data:` event per payload (objects are JSON-encoded), then `[DONE]`. */
export function sse(...payloads: (object | string)[]): string {
  return [...payloads, "[DONE]"]
    .map((p) => `data: ${typeof p === "string" ? p : JSON.stringify(p)}\n\n`)
    .join("");
}

/** An SSE response that sends these payloads and then neither ends nor says another word. */
export function hangingStream(...payloads: object[]): PassThrough {
  const stream = new PassThrough();
  for (const p of payloads) stream.write(`data: ${JSON.stringify(p)}\n\n`);
  return stream;
}

/** A provider aimed at the nock host, whose backoff waits are recorded instead of slept. */
export function testProvider(options: OpenAIProviderOptions = {}): {
  provider: OpenAIProvider;
  waits: number[];
} {
  const waits: number[] = [];
  const provider = new OpenAIProvider({
    baseURL: BASE_URL,
    apiKey: "test-key",
    sleep: async (ms) => {
      waits.push(ms);
    },
    ...options,
  });
  return { provider, waits };
}

/** A one-message request; tools are optional. */
export function request(overrides: Partial<ProviderRequest> = {}): ProviderRequest {
  return {
    model: "test-model",
    messages: [{ role: "user", content: "hello" }],
    tools: [],
    ...overrides,
  };
}

/** Drain a stream: every event, and the error it ended with (if any). */
export async function collect(
  stream: AsyncIterable<ProviderStreamEvent>,
  onEvent?: (event: ProviderStreamEvent) => void,
): Promise<{ events: ProviderStreamEvent[]; error: unknown }> {
  const events: ProviderStreamEvent[] = [];
  try {
    for await (const event of stream) {
      events.push(event);
      onEvent?.(event);
    }
    return { events, error: undefined };
  } catch (error) {
    return { events, error };
  }
}

/** The step-finished event of a stream (fails the test when absent). */
export function finished(
  events: ProviderStreamEvent[],
): Extract<ProviderStreamEvent, { type: "step-finished" }> {
  const last = events.at(-1);
  if (last?.type !== "step-finished") throw new Error(`stream did not finish: ${JSON.stringify(events)}`);
  return last;
}

/** Reset nock between tests and refuse network access beyond loopback test servers. */
export function isolateNetwork(): void {
  nock.cleanAll();
  nock.disableNetConnect();
  nock.enableNetConnect("127.0.0.1");
}
