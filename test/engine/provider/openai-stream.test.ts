/** OpenAIProvider turns real-shaped SSE streams (replayed with nock) into provider events. */
import nock from "nock";
import { beforeEach, describe, expect, it } from "vitest";
import { MAX_REPLY_CHARS } from "../../../src/core/messages.js";
import { StreamAssembler } from "../../../src/engine/provider/openai-stream-assembler.js";
import { ProviderError } from "../../../src/engine/provider/provider.js";
import {
  chunk,
  collect,
  finished,
  hangingStream,
  HOST,
  isolateNetwork,
  PATH,
  request,
  SSE_HEADERS,
  sse,
  testProvider,
  usageChunk,
} from "./sse-helpers.js";

beforeEach(isolateNetwork);

describe("OpenAIProvider streaming", () => {
  it("streams text deltas, sends tools and usage options, and maps the usage chunk", async () => {
    let sent: unknown;
    nock(HOST)
      .post(PATH, (body) => {
        sent = body;
        return true;
      })
      .reply(
        200,
        sse(
          chunk({ role: "assistant", content: "", refusal: null }),
          chunk({ content: "Hel" }),
          chunk({ content: "lo!" }),
          chunk({}, "stop"),
          usageChunk(12, 3),
        ),
        SSE_HEADERS,
      );
    const { provider } = testProvider();
    const tool = {
      name: "read_file",
      description: "Read a file",
      parameters: { type: "object", properties: {} },
    };
    const { events, error } = await collect(
      provider.stream(request({ tools: [tool], maxOutputTokens: 256 })),
    );

    expect(error).toBeUndefined();
    expect(events.slice(0, -1)).toEqual([
      { type: "text-delta", delta: "Hel" },
      { type: "text-delta", delta: "lo!" },
    ]);
    expect(finished(events)).toEqual({
      type: "step-finished",
      text: "Hello!",
      toolCalls: [],
      finishReason: "stop",
      usage: { inputTokens: 12, outputTokens: 3, totalTokens: 15 },
    });
    expect(sent).toMatchObject({
      model: "test-model",
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 256,
      messages: [{ role: "user", content: "hello" }],
      tools: [{ type: "function", function: tool }],
    });
  });

  it("emits reasoning deltas from reasoning_content (vLLM) and reasoning (OpenRouter, Ollama)", async () => {
    nock(HOST)
      .post(PATH)
      .reply(
        200,
        sse(
          chunk({ role: "assistant", content: null, reasoning_content: "Let me " }),
          chunk({ reasoning: "think.", reasoning_details: [{ type: "reasoning.text", text: "think." }] }),
          chunk({ content: "42" }),
          chunk({}, "stop"),
        ),
        SSE_HEADERS,
      );
    const { provider } = testProvider();
    const { events } = await collect(provider.stream(request()));
    expect(events.map((e) => e.type)).toEqual([
      "reasoning-delta",
      "reasoning-delta",
      "text-delta",
      "step-finished",
    ]);
    expect(events.slice(0, 2).map((e) => (e.type === "reasoning-delta" ? e.delta : ""))).toEqual([
      "Let me ",
      "think.",
    ]);
    expect(finished(events).text).toBe("42");
    expect(finished(events).usage).toBeUndefined();
  });

  it("accepts delta.content as an array of typed parts: text is the answer, thinking the reasoning (Mistral)", async () => {
    nock(HOST)
      .post(PATH)
      .reply(
        200,
        sse(
          chunk({
            role: "assistant",
            content: [{ type: "thinking", thinking: [{ type: "text", text: "Two " }] }],
          }),
          chunk({
            content: [
              { type: "thinking", thinking: "plus two." },
              { type: "text", text: "It is " },
            ],
          }),
          chunk({
            content: [
              { type: "reference", reference_ids: [1] },
              { type: "text", text: "4." },
            ],
          }),
          chunk({}, "stop"),
        ),
        SSE_HEADERS,
      );
    const { provider } = testProvider();
    const { events, error } = await collect(provider.stream(request()));
    expect(error).toBeUndefined();
    expect(events.slice(0, -1)).toEqual([
      { type: "reasoning-delta", delta: "Two " },
      { type: "reasoning-delta", delta: "plus two." },
      { type: "text-delta", delta: "It is " },
      { type: "text-delta", delta: "4." },
    ]);
    expect(finished(events).text).toBe("It is 4.");
  });

  it("still rejects an array content whose parts are not typed objects", async () => {
    nock(HOST)
      .post(PATH)
      .reply(200, sse(chunk({ content: ["plain string part"] }), chunk({}, "stop")), SSE_HEADERS);
    const { provider } = testProvider();
    const { error } = await collect(provider.stream(request()));
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as Error).message).toContain("choices.0.delta.content");
  });

  it("assembles two parallel tool calls whose argument fragments interleave across chunks", async () => {
    const call = (index: number, fields: object) => chunk({ tool_calls: [{ index, ...fields }] });
    nock(HOST)
      .post(PATH)
      .reply(
        200,
        sse(
          chunk({ role: "assistant", content: null }),
          call(0, { id: "call_A", type: "function", function: { name: "read_file", arguments: "" } }),
          call(0, { function: { arguments: '{"pa' } }),
          call(1, { id: "call_B", type: "function", function: { name: "list_dir", arguments: '{"dir"' } }),
          call(0, { function: { arguments: 'th":"a.t' } }),
          call(1, { function: { arguments: ':"src"}' } }),
          call(0, { function: { arguments: 'xt"}' } }),
          chunk({}, "tool_calls"),
          usageChunk(50, 20),
        ),
        SSE_HEADERS,
      );
    const { provider } = testProvider();
    const { events } = await collect(provider.stream(request()));
    expect(events).toHaveLength(1);
    expect(finished(events)).toMatchObject({
      text: "",
      finishReason: "tool_calls",
      toolCalls: [
        { id: "call_A", name: "read_file", arguments: '{"path":"a.txt"}' },
        { id: "call_B", name: "list_dir", arguments: '{"dir":"src"}' },
      ],
    });
  });

  it("tolerates fragments without index or id (Ollama shape) and synthesises stable ids", async () => {
    nock(HOST)
      .post(PATH)
      .reply(
        200,
        sse(
          chunk({ role: "assistant", content: "Checking." }),
          chunk({
            tool_calls: [{ type: "function", function: { name: "read_file", arguments: '{"path":' } }],
          }),
          chunk({ tool_calls: [{ function: { arguments: '"a.txt"}' } }] }),
          chunk({
            tool_calls: [{ type: "function", function: { name: "list_dir", arguments: { dir: "." } } }],
          }),
          chunk({}, "stop"),
        ),
        SSE_HEADERS,
      );
    const { provider } = testProvider();
    const { events } = await collect(provider.stream(request()));
    const step = finished(events);
    expect(step.finishReason).toBe("tool_calls");
    expect(step.toolCalls.map((c) => [c.name, c.arguments])).toEqual([
      ["read_file", '{"path":"a.txt"}'],
      ["list_dir", '{"dir":"."}'],
    ]);
    const [first, second] = step.toolCalls.map((c) => c.id);
    expect(first).toMatch(/^call_[0-9a-f]+_0$/);
    expect(second).toMatch(/^call_[0-9a-f]+_1$/);
  });

  it("starts a new call when an index is reused with a different id and a name", async () => {
    nock(HOST)
      .post(PATH)
      .reply(
        200,
        sse(
          chunk({ tool_calls: [{ index: 0, id: "c1", function: { name: "a", arguments: "{}" } }] }),
          chunk({ tool_calls: [{ index: 0, id: "c2", function: { name: "b", arguments: "{}" } }] }),
          chunk({}, "tool_calls"),
        ),
        SSE_HEADERS,
      );
    const { provider } = testProvider();
    const { events } = await collect(provider.stream(request()));
    expect(finished(events).toolCalls.map((c) => `${c.id}:${c.name}`)).toEqual(["c1:a", "c2:b"]);
  });

  it("finds each fragment's call by its index directly, so a reply of many tiny calls costs no scan per fragment", async () => {
    // A hostile endpoint may stream as many tiny calls as the reply cap allows (each fragment used
    // to be matched by scanning every call before it: 60,000 calls took 12 s of blocked loop, so
    // this test ran past its timeout; chunks arrive on separate loop turns, as from a socket).
    const assembler = new StreamAssembler(
      (n) => `s${n}`,
      () => undefined,
    );
    const count = 150_000;
    const batch = 1_000;
    for (let first = 0; first < count; first += batch) {
      const tool_calls = Array.from({ length: batch }, (_, i) => ({
        index: first + i,
        id: `c${first + i}`,
        function: { name: "ls", arguments: "" },
      }));
      assembler.push(chunk({ tool_calls }));
      await new Promise((resolve) => setImmediate(resolve));
    }
    // Later fragments of early calls still reach them, and a reused index with a new id starts a call.
    assembler.push(chunk({ tool_calls: [{ index: 7, function: { arguments: '{"a":1}' } }] }));
    assembler.push(
      chunk({ tool_calls: [{ index: 7, id: "again", function: { name: "cat", arguments: "{}" } }] }),
    );
    assembler.push(chunk({ tool_calls: [{ index: 7, function: { arguments: " " } }] }));
    assembler.push(chunk({}, "tool_calls"));
    const done = assembler.finish();
    if (done.type !== "step-finished") throw new Error(`unexpected ${done.type}`);
    expect(done.toolCalls).toHaveLength(count + 1);
    expect(done.toolCalls[7]).toEqual({ id: "c7", name: "ls", arguments: '{"a":1}' });
    expect(done.toolCalls[count - 1]).toEqual({ id: `c${count - 1}`, name: "ls", arguments: "" });
    expect(done.toolCalls[count]).toEqual({ id: "again", name: "cat", arguments: "{} " });
  });

  it("keeps finish_reason length so the engine can tell a cut-off call", async () => {
    nock(HOST)
      .post(PATH)
      .reply(
        200,
        sse(
          chunk({
            tool_calls: [{ index: 0, id: "c1", function: { name: "write_file", arguments: '{"text":"ab' } }],
          }),
          chunk({}, "length"),
        ),
        SSE_HEADERS,
      );
    const { provider } = testProvider();
    const step = finished((await collect(provider.stream(request()))).events);
    expect(step.finishReason).toBe("length");
    expect(step.toolCalls[0]?.arguments).toBe('{"text":"ab');
  });

  it("fails with 'incomplete' when the stream ends without a finish reason, without retrying", async () => {
    const scope = nock(HOST)
      .post(PATH)
      .reply(200, sse(chunk({ content: "Half an ans" })), SSE_HEADERS)
      .post(PATH)
      .reply(200, sse(chunk({ content: "never" }), chunk({}, "stop")), SSE_HEADERS);
    const { provider } = testProvider();
    const { events, error } = await collect(provider.stream(request()));
    expect(events).toEqual([{ type: "text-delta", delta: "Half an ans" }]);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).kind).toBe("incomplete");
    expect(scope.pendingMocks()).toHaveLength(1);
  });

  it("turns an SSE error payload after output began into a ProviderError (OpenRouter)", async () => {
    const scope = nock(HOST)
      .post(PATH)
      .reply(
        200,
        sse(chunk({ content: "Partial" }), {
          ...chunk({ content: "" }, "error"),
          error: { code: 502, message: "Provider disconnected unexpectedly" },
        }),
        SSE_HEADERS,
      )
      .post(PATH)
      .reply(200, sse(chunk({}, "stop")), SSE_HEADERS);
    const { provider } = testProvider();
    const { events, error } = await collect(provider.stream(request()));
    expect(events).toEqual([{ type: "text-delta", delta: "Partial" }]);
    expect(error).toMatchObject({
      kind: "server",
      message: "The model endpoint reported an error mid-response: Provider disconnected unexpectedly",
    });
    expect(scope.pendingMocks()).toHaveLength(1);
  });

  it("cuts off a reply that streams more than MAX_REPLY_CHARS, as text or as tool-call arguments", async () => {
    const piece = "x".repeat(65_536);
    const pieces = Math.ceil(MAX_REPLY_CHARS / piece.length) + 1;
    const text = Array.from({ length: pieces }, () => chunk({ content: piece }));
    nock(HOST)
      .post(PATH)
      .reply(200, sse(...text, chunk({}, "stop")), SSE_HEADERS);
    const { provider } = testProvider();
    const { events, error } = await collect(provider.stream(request()));
    expect(error).toMatchObject({ kind: "incomplete", message: expect.stringMatching(/too long/) });
    expect(events.length).toBeLessThan(pieces);

    // A server that never ends a call's arguments: the reply stops at the cap, not at the memory limit.
    const endless = hangingStream(
      chunk({ tool_calls: [{ index: 0, id: "c1", function: { name: "write_file", arguments: "" } }] }),
      ...Array.from({ length: pieces }, () =>
        chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }),
      ),
    );
    nock(HOST)
      .post(PATH)
      .reply(200, () => endless, SSE_HEADERS);
    const cut = await collect(provider.stream(request()));
    expect(cut.error).toMatchObject({ kind: "incomplete", message: expect.stringMatching(/too long/) });
  });

  it("counts chunks that carry nothing for the reply, so an endless run of them ends the step", async () => {
    const onChoice1 = (delta: object) => ({
      ...chunk({}),
      choices: [{ index: 1, delta, finish_reason: null }],
    });
    const nothing = [
      {},
      { ...chunk({}), choices: [] },
      chunk({ role: "assistant", content: "" }),
      onChoice1({ content: "x" }),
      usageChunk(1, 1),
    ];
    const assembler = new StreamAssembler(
      (n) => `c${n}`,
      () => undefined,
    );
    for (const kind of nothing) {
      assembler.push(kind);
      expect(assembler.advanced, JSON.stringify(kind)).toBe(false);
    }
    // Each costs at least one character: the cheapest, endless, ends at the budget.
    const empty = new StreamAssembler(
      (n) => `c${n}`,
      () => undefined,
    );
    expect(() => {
      for (let i = 0; i <= MAX_REPLY_CHARS; i++) empty.push({ choices: [] });
    }).toThrow(/not part of the reply/);
    for (const progress of [
      chunk({ content: "a" }),
      chunk({ reasoning_content: "b" }),
      chunk({ tool_calls: [{ index: 0, id: "c1", function: { name: "f", arguments: "" } }] }),
      chunk({}, "stop"),
    ]) {
      assembler.push(progress);
      expect(assembler.advanced, JSON.stringify(progress)).toBe(true);
    }
    // An empty tool-call fragment, or a finish reason said again, moves nothing on.
    for (const repeat of [chunk({ tool_calls: [{ index: 0 }] }), chunk({}, "stop")]) {
      assembler.push(repeat);
      expect(assembler.advanced, JSON.stringify(repeat)).toBe(false);
    }

    // Over HTTP: what other choices carry counts too — text, reasoning or tool calls.
    const piece = "x".repeat(65_536);
    const pieces = Math.ceil(MAX_REPLY_CHARS / piece.length) + 1;
    const endless = hangingStream(
      chunk({ content: "Hi" }),
      ...Array.from({ length: pieces }, (_, i) =>
        onChoice1(
          i % 2 === 0
            ? { reasoning: piece }
            : { tool_calls: [{ index: 0, id: `c${i}`, function: { name: "f", arguments: piece } }] },
        ),
      ),
    );
    nock(HOST)
      .post(PATH)
      .reply(200, () => endless, SSE_HEADERS);
    // A stall timeout the test never meets: the budget, not the timer, must end the step.
    const { provider } = testProvider({ stallTimeoutMs: 10_000 });
    const { events, error } = await collect(provider.stream(request()));
    expect(events).toEqual([{ type: "text-delta", delta: "Hi" }]);
    expect(error).toMatchObject({
      kind: "incomplete",
      message:
        "The model's reply was cut off: the endpoint streamed over 2,000,000 characters of chunks that are not part of the reply (empty chunks or other choices).",
    });
    endless.destroy();
  });

  it("reports a malformed chunk by naming the offending field", async () => {
    nock(HOST)
      .post(PATH)
      .reply(200, sse(chunk({ content: 42 }), chunk({}, "stop")), SSE_HEADERS);
    const { provider } = testProvider();
    const { error } = await collect(provider.stream(request()));
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as Error).message).toContain("choices.0.delta.content");
  });

  it.each([
    ["too large to add up", { prompt_tokens: 1e308, completion_tokens: 1e308 }, "usage.prompt_tokens"],
    ["negative", { prompt_tokens: -1, completion_tokens: 5, total_tokens: 4 }, "usage.prompt_tokens"],
    ["missing completion_tokens (some proxies)", { prompt_tokens: 10 }, "usage.completion_tokens"],
    ["not whole numbers", { prompt_tokens: 1.5, completion_tokens: 2 }, "usage.prompt_tokens"],
  ])("keeps the reply whose usage report is %s, leaving its token counts out", async (_, usage, field) => {
    nock(HOST)
      .post(PATH)
      .reply(
        200,
        sse(chunk({ content: "The full answer." }), chunk({}, "stop"), { ...usageChunk(0, 0), usage }),
        SSE_HEADERS,
      );
    const warnings: unknown[][] = [];
    const { provider } = testProvider({ logger: { warn: (...args: unknown[]) => warnings.push(args) } });
    const { events, error } = await collect(provider.stream(request()));
    expect(error).toBeUndefined();
    expect(finished(events)).toMatchObject({
      text: "The full answer.",
      finishReason: "stop",
      usage: undefined,
    });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.[0]).toMatchObject({ problem: expect.stringContaining(field) });
  });

  it("logs an endpoint's unreadable usage reports once, and still reads a good one", async () => {
    const bad = { ...usageChunk(0, 0), usage: { prompt_tokens: -1, completion_tokens: 1 } };
    nock(HOST)
      .post(PATH)
      .times(2)
      .reply(200, sse(chunk({ content: "Hi" }), chunk({}, "stop"), bad), SSE_HEADERS)
      .post(PATH)
      .reply(200, sse(chunk({ content: "Hi" }), chunk({}, "stop"), usageChunk(3, 4)), SSE_HEADERS);
    const warnings: unknown[][] = [];
    const { provider } = testProvider({ logger: { warn: (...args: unknown[]) => warnings.push(args) } });
    for (let i = 0; i < 2; i++) expect((await collect(provider.stream(request()))).error).toBeUndefined();
    expect(warnings).toHaveLength(1);
    const { events } = await collect(provider.stream(request()));
    expect(finished(events).usage).toEqual({ inputTokens: 3, outputTokens: 4, totalTokens: 7 });
  });

  it("reports a chunk that is not JSON", async () => {
    nock(HOST)
      .post(PATH)
      .reply(200, sse("{not json", chunk({}, "stop")), SSE_HEADERS);
    const { provider } = testProvider();
    const { error } = await collect(provider.stream(request()));
    expect(error).toMatchObject({ kind: "server" });
    expect((error as Error).message).toMatch(/not JSON/);
  });
});
