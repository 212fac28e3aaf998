/** OpenAIProvider over real HTTP against the local fake OpenAI-compatible server. */
import { afterEach, describe, expect, it } from "vitest";
import { OpenAIProvider } from "../../../src/engine/provider/openai-provider.js";
import type { ProviderStreamEvent } from "../../../src/engine/provider/provider.js";
import { type FakeOpenAI, startFakeOpenAI } from "../../fakes/fake-openai.js";
import { collect, finished, request } from "./sse-helpers.js";

let fake: FakeOpenAI | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function start(): Promise<{ fake: FakeOpenAI; provider: OpenAIProvider; waits: number[] }> {
  fake = await startFakeOpenAI();
  const waits: number[] = [];
  const provider = new OpenAIProvider({
    baseURL: fake.baseURL,
    apiKey: "test-key",
    stallTimeoutMs: 5_000,
    sleep: async (ms) => {
      waits.push(ms);
    },
  });
  return { fake, provider, waits };
}

const readFile = {
  name: "read_file",
  description: "Read a file",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
};

describe("OpenAIProvider against the fake server", () => {
  it("runs a tool-call step and a follow-up step over real HTTP", async () => {
    const { fake, provider } = await start();
    fake.setHandler(({ index }) =>
      index === 0
        ? {
            reasoning: ["Need the file."],
            text: "Reading.",
            toolCalls: [{ name: "read_file", arguments: '{"path":"notes.md"}' }],
          }
        : { text: ["It says ", "hi."] },
    );
    const first = await collect(provider.stream(request({ tools: [readFile] })));
    expect(first.events.map((e) => e.type)).toEqual(["reasoning-delta", "text-delta", "step-finished"]);
    const step = finished(first.events);
    expect(step).toMatchObject({
      text: "Reading.",
      finishReason: "tool_calls",
      toolCalls: [{ id: "call_fake_0_0", name: "read_file", arguments: '{"path":"notes.md"}' }],
      usage: { inputTokens: expect.any(Number) },
    });

    const second = await collect(
      provider.stream(
        request({
          tools: [readFile],
          messages: [
            { role: "user", content: "What does notes.md say?" },
            {
              role: "assistant",
              content: "Reading.",
              tool_calls: [
                { id: "call_fake_0_0", type: "function", function: { name: "read_file", arguments: "{}" } },
              ],
            },
            { role: "tool", tool_call_id: "call_fake_0_0", content: "hi" },
          ],
        }),
      ),
    );
    expect(finished(second.events)).toMatchObject({
      text: "It says hi.",
      finishReason: "stop",
      toolCalls: [],
    });
    expect(fake.requests[0]).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
      tools: [{ type: "function", function: readFile }],
    });
    expect(fake.requests[1].messages.slice(1)).toEqual([
      {
        role: "assistant",
        content: "Reading.",
        tool_calls: [
          { id: "call_fake_0_0", type: "function", function: { name: "read_file", arguments: "{}" } },
        ],
      },
      { role: "tool", tool_call_id: "call_fake_0_0", content: "hi" },
    ]);
  });

  it("closes the connection when the caller aborts mid-stream, and the server sees it", async () => {
    const { fake, provider } = await start();
    fake.setHandler(() => ({ text: ["Once ", "upon ", "a time"], hangAfterChunks: 2 }));
    const controller = new AbortController();
    const { events, error } = await collect(provider.stream(request({ signal: controller.signal })), () =>
      controller.abort(),
    );
    expect(events).toEqual([{ type: "text-delta", delta: "Once " }]);
    expect(error).toMatchObject({ kind: "aborted" });
    await fake.waitForAbort(0);
    expect(fake.aborted).toEqual([0]);
  });

  it("cancels a stalled stream on the server too", async () => {
    const { fake } = await start();
    fake.setHandler(() => ({ text: ["Once ", "upon"], hangAfterChunks: 2 }));
    const provider = new OpenAIProvider({ baseURL: fake.baseURL, apiKey: "k", stallTimeoutMs: 50 });
    const { error } = await collect(provider.stream(request()));
    expect(error).toMatchObject({ kind: "stalled" });
    await fake.waitForAbort(0);
  });

  it("retries a connection that dropped before any output, but not one that dropped after", async () => {
    const { fake, provider, waits } = await start();
    fake.setHandler(({ index }) => (index === 0 ? { text: "lost", dropAfterChunks: 1 } : { text: "ok" }));
    expect(finished((await collect(provider.stream(request()))).events).text).toBe("ok");
    expect(waits).toEqual([500]);
    expect(fake.requests).toHaveLength(2);

    fake.setHandler(() => ({ text: ["half", "rest"], dropAfterChunks: 2 }));
    const seen: ProviderStreamEvent[] = [];
    const { error } = await collect(provider.stream(request()), (e) => seen.push(e));
    expect(seen).toEqual([{ type: "text-delta", delta: "half" }]);
    expect(error).toMatchObject({ kind: "connection" });
    expect(fake.requests).toHaveLength(3);
    expect(waits).toEqual([500]);
  });

  it("names the base URL when nothing listens there", async () => {
    const { fake } = await start();
    const baseURL = fake.baseURL;
    await fake.close();
    const provider = new OpenAIProvider({ baseURL, apiKey: "k", maxRetries: 0 });
    const { error } = await collect(provider.stream(request()));
    expect(error).toMatchObject({ kind: "connection" });
    expect((error as Error).message).toBe(
      `Could not connect to the model endpoint at ${baseURL} (ECONNREFUSED).`,
    );
  });
});
