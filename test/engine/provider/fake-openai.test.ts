/** The fake OpenAI-compatible server speaks the real wire shapes (checked with plain fetch). */
import { afterEach, describe, expect, it } from "vitest";
import { type FakeBody, type FakeOpenAI, startFakeOpenAI } from "../../fakes/fake-openai.js";

let fake: FakeOpenAI | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

function post(baseURL: string, body: unknown, signal?: AbortSignal): Promise<Response> {
  return fetch(`${baseURL}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal,
  });
}

function sseData(text: string): string[] {
  return text
    .split("\n\n")
    .filter((block) => block.startsWith("data: "))
    .map((block) => block.slice("data: ".length));
}

describe("fake OpenAI server", () => {
  it("echoes the last user message as streamed chunks ending in a usage chunk and [DONE]", async () => {
    fake = await startFakeOpenAI();
    const res = await post(fake.baseURL, {
      model: "m",
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: "user", content: "hello there" }],
    });
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const data = sseData(await res.text());
    expect(data.at(-1)).toBe("[DONE]");
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
    const text = chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("");
    expect(text).toBe('You said: "hello there"');
    expect(chunks.at(-2).choices[0].finish_reason).toBe("stop");
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: expect.any(Number) } });
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0].model).toBe("m");
  });

  it("streams tool calls as fragments split across chunks, without usage unless asked", async () => {
    fake = await startFakeOpenAI(() => ({
      toolCalls: [
        { name: "read_file", arguments: '{"path":"a.txt"}' },
        { id: "call_x", name: "ls", arguments: "{}" },
      ],
    }));
    const res = await post(fake.baseURL, { model: "m", stream: true, messages: [] });
    const chunks = sseData(await res.text())
      .slice(0, -1)
      .map((d) => JSON.parse(d));
    const fragments = chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
    expect(fragments.filter((f: FakeBody) => f.index === 0).length).toBeGreaterThan(2);
    expect(fragments[0]).toMatchObject({ index: 0, id: "call_fake_0_0", function: { name: "read_file" } });
    const args0 = fragments
      .filter((f: FakeBody) => f.index === 0)
      .map((f: FakeBody) => f.function.arguments)
      .join("");
    expect(args0).toBe('{"path":"a.txt"}');
    expect(fragments.find((f: FakeBody) => f.index === 1)).toMatchObject({ id: "call_x" });
    expect(chunks.at(-1).choices[0].finish_reason).toBe("tool_calls");
    expect(chunks.some((c) => c.usage)).toBe(false);
  });

  it("answers non-streaming requests with one completion, and serves /models", async () => {
    fake = await startFakeOpenAI(() => ({ text: "done", reasoning: ["hmm"] }));
    const body = await (await post(fake.baseURL, { model: "m", messages: [] })).json();
    expect(body).toMatchObject({
      object: "chat.completion",
      choices: [
        { message: { role: "assistant", content: "done", reasoning_content: "hmm" }, finish_reason: "stop" },
      ],
      usage: { total_tokens: expect.any(Number) },
    });
    const models = (await (await fetch(`${fake.baseURL}/models`)).json()) as FakeBody;
    expect(models.data[0].id).toBe("fake-model");
  });

  it("returns HTTP errors with headers, and setHandler switches replies", async () => {
    fake = await startFakeOpenAI();
    fake.setHandler(() => ({ status: 429, headers: { "retry-after": "3" } }));
    const res = await post(fake.baseURL, { model: "m", messages: [] });
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("3");
    expect(((await res.json()) as FakeBody).error.type).toBe("rate_limit_error");
  });

  it("records a client abort of a hanging stream", async () => {
    fake = await startFakeOpenAI(() => ({ text: ["a", "b"], hangAfterChunks: 2 }));
    const controller = new AbortController();
    const res = await post(fake.baseURL, { model: "m", stream: true, messages: [] }, controller.signal);
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    await fake.waitForAbort(0);
    expect(fake.aborted).toEqual([0]);
  });
});
