import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/core/events.js";
import type { ApprovalOutcome, ApprovalVerdict, Approver } from "../../src/engine/asking/ports.js";
import { callHash } from "../../src/engine/call-identity.js";
import { z } from "zod";
import { ProviderError } from "../../src/engine/provider/provider.js";
import { withMessages } from "../../src/core/request.js";
import { REASON_MAX_CHARS } from "../../src/engine/tool-results.js";
import { PermissionEngine } from "../../src/engine/permissions/permission-engine.js";
import { TurnEngine } from "../../src/engine/turn-engine.js";
import { MALFORMED_ARGUMENTS_ERROR, TRUNCATED_ARGUMENTS_ERROR } from "../../src/tools/registry.js";
import { defineTool } from "../../src/core/tool.js";
import { textStep, toolStep } from "../support/scripted-provider.js";
import {
  collect,
  completion,
  expectNoOrphans,
  isDeepFrozen,
  makeHarness,
  makeRequest,
  ofType,
  resultOf,
} from "./helpers/harness.js";
import { freshPermissions } from "./helpers/test-tools.js";

describe("TurnEngine basics", () => {
  it("streams a text answer and persists the user message with the reply, in one write", async () => {
    const h = makeHarness();
    h.provider.push({
      text: ["Hel", "lo"],
      reasoning: ["thinking…"],
      usage: { inputTokens: 10, outputTokens: 2, totalTokens: 12 },
      onStart: () => expect(h.persistence.appended).toEqual([]),
    });
    const events = await collect(h.engine.run(makeRequest({ prompt: "hi" })));
    expect(events.map((e) => e.type)).toEqual([
      "reasoning-delta",
      "text-delta",
      "text-delta",
      "assistant-message-done",
      "turn-completed",
    ]);
    expect(completion(events)).toMatchObject({ status: "completed", iterations: 1, finalText: "Hello" });
    expect(completion(events).usage).toEqual({ inputTokens: 10, outputTokens: 2, totalTokens: 12 });
    expect(h.history.messages.map((m) => [m.role, m.content])).toEqual([
      ["user", "hi"],
      ["assistant", "Hello"],
    ]);
    expect(JSON.stringify(h.history.messages)).not.toContain("thinking");
    expect(h.persistence.writes).toEqual([2]);
    expect(h.provider.requests[0]?.messages[0]).toEqual({ role: "system", content: "You are a test agent." });
    h.provider.assertAllConsumed();
  });

  it.each([
    ["length", "The answer was cut off: the model reached its output limit."],
    ["content_filter", "The answer was cut off: it was stopped by the provider's content filter."],
  ] as const)(
    "says an answer that ended with finish_reason %s was cut off",
    async (finishReason, message) => {
      const h = makeHarness({ steps: [{ text: ["The steps are: 1. back up, 2. dro"], finishReason }] });
      const events = await collect(h.engine.run(makeRequest()));
      expect(events.map((e) => e.type)).toEqual([
        "text-delta",
        "assistant-message-done",
        "notice",
        "turn-completed",
      ]);
      expect(ofType(events, "notice")).toEqual([{ type: "notice", level: "warning", message }]);
      expect(completion(events)).toMatchObject({
        status: "completed",
        finalText: "The steps are: 1. back up, 2. dro",
      });
      const whole = makeHarness({ steps: [{ text: ["Done."], finishReason: "stop" }] });
      expect(ofType(await collect(whole.engine.run(makeRequest())), "notice")).toEqual([]);
    },
  );

  it("tells a message is done — and whether it calls tools — before storing it", async () => {
    const h = makeHarness({
      steps: [
        toolStep(["c1", "read_file", { path: "a" }], ["c2", "read_file", { path: "b" }]),
        textStep("ok"),
      ],
    });
    const seen: number[] = [];
    let told = (): void => undefined;
    // Storing an assistant message waits until its "done" reached the caller: it must come first.
    h.persistence.onAppend = async (message) => {
      if (message.role === "assistant") await new Promise<void>((resolve) => (told = resolve));
    };
    const events = await collect(h.engine.run(makeRequest()), (event) => {
      if (event.type !== "assistant-message-done") return;
      seen.push(event.toolCalls);
      setImmediate(() => told());
    });
    expect(completion(events).status).toBe("completed");
    expect(seen).toEqual([2, 0]);
  });

  it("runs tools across steps and persists each result before the next model call", async () => {
    const h = makeHarness({ grants: [] });
    h.provider.push(toolStep(["c1", "read_file", { path: "a.txt" }]), {
      ...textStep("done"),
      onStart: () =>
        expect(h.persistence.appended.at(-1)).toMatchObject({ role: "tool", tool_call_id: "c1" }),
    });
    const events = await collect(h.engine.run(makeRequest()));
    expect(completion(events)).toMatchObject({ status: "completed", iterations: 2, finalText: "done" });
    expect(resultOf(h.history.messages, "c1")).toBe('read_file done: {"path":"a.txt"}');
    expect([...h.persistence.started]).toEqual(["c1"]);
    expect(ofType(events, "tool-output-delta")[0]).toMatchObject({
      callId: "c1",
      delta: "running read_file",
    });
    expect(h.provider.requests[1]?.messages.at(-1)).toEqual({
      role: "tool",
      tool_call_id: "c1",
      content: 'read_file done: {"path":"a.txt"}',
    });
    expectNoOrphans(h.history.messages);
  });

  it("strips display-only fields and failed attempts from what the model receives", async () => {
    const h = makeHarness({ steps: [textStep("ok")] });
    const history = [
      { role: "user" as const, content: "earlier", meta: { at: "t", source: "slack", untrusted: true } },
      { role: "assistant" as const, content: "partial", meta: { error: "The model failed." } },
      {
        role: "assistant" as const,
        content: "answer",
        meta: { usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } },
      },
    ];
    await collect(h.engine.run(makeRequest({ messages: history, prompt: "now" })));
    expect(h.provider.lastRequest.messages).toEqual([
      { role: "system", content: "You are a test agent." },
      { role: "user", content: "earlier" },
      { role: "assistant", content: "answer" },
      { role: "user", content: "now" },
    ]);
  });

  it("appends the ephemeral context block at send time only", async () => {
    let n = 0;
    const h = makeHarness({
      steps: [toolStep(["c1", "read_file", { path: "a" }]), textStep("ok")],
      options: { contextProvider: async (request) => `mode=${request.mode} call=${++n}` },
    });
    await collect(h.engine.run(makeRequest({ prompt: "go" })));
    expect(h.provider.requests[0]?.messages.at(-1)).toEqual({
      role: "user",
      content: "go\n\n<context>\nmode=interactive call=1\n</context>",
    });
    expect(h.provider.requests[1]?.messages[1]).toEqual({
      role: "user",
      content: "go\n\n<context>\nmode=interactive call=2\n</context>",
    });
    expect(h.history.messages[0]).toMatchObject({ role: "user", content: "go" });
    expect(h.persistence.appended[0]).toMatchObject({ content: "go" });
  });

  it("a notice quoting a failure is scrubbed before it reaches the thread", async () => {
    const h = makeHarness({
      steps: [textStep("ok")],
      options: {
        contextProvider: async () => {
          throw new Error("GET https://bot:hunter2-secret@internal.example/ctx failed");
        },
      },
    });
    const events = await collect(h.engine.run(makeRequest()));
    expect(events.find((e) => e.type === "notice")).toMatchObject({
      message: "Context provider failed: Error: GET https://bot:[redacted]@internal.example/ctx failed",
    });
  });

  it("ends each turn's system prompt with its requester's part, asked once per turn, its notice shown", async () => {
    const asked: string[] = [];
    const h = makeHarness({
      steps: [toolStep(["c1", "read_file", { path: "a" }]), textStep("ok"), textStep("ok")],
      options: {
        instructions: "base",
        requesterInstructions: async ({ requester }) => {
          asked.push(requester.userId);
          return requester.userId === "U1"
            ? { text: "about Ann" }
            : { text: "about Ben", notice: "Ben's part came late" };
        },
      },
    });
    const ann = await collect(h.engine.run(makeRequest()));
    const ben = await collect(
      h.engine.run(
        makeRequest({ messages: h.history.messages, requester: { userId: "U2", displayName: "Ben" } }),
      ),
    );
    expect(asked).toEqual(["U1", "U2"]);
    expect(h.provider.requests.map((r) => r.messages[0])).toEqual([
      { role: "system", content: "base\n\nabout Ann" },
      { role: "system", content: "base\n\nabout Ann" },
      { role: "system", content: "base\n\nabout Ben" },
    ]);
    expect(ofType(ann, "notice")).toEqual([]);
    expect(ofType(ben, "notice")).toEqual([
      { type: "notice", level: "warning", message: "Ben's part came late" },
    ]);
  });

  it("emits only deeply frozen events", async () => {
    const h = makeHarness({
      steps: [toolStep(["c1", "update_plan", { steps: [{ title: "a", status: "pending" }] }]), textStep("x")],
    });
    const events = await collect(h.engine.run(makeRequest()));
    expect(events.length).toBeGreaterThan(3);
    for (const event of events) expect(isDeepFrozen(event), event.type).toBe(true);
    expect(ofType(events, "plan-updated")[0]?.steps).toEqual([{ title: "a", status: "pending" }]);
  });

  it("stops at the step budget with max_iterations", async () => {
    const h = makeHarness({
      steps: [toolStep(["c1", "read_file", { path: "a" }]), toolStep(["c2", "read_file", { path: "b" }])],
    });
    const events = await collect(h.engine.run(makeRequest({ maxSteps: 2 })));
    expect(completion(events)).toMatchObject({ status: "max_iterations", iterations: 2 });
    expectNoOrphans(h.history.messages);
    h.provider.assertAllConsumed();
  });

  it("adds steered messages at the next step boundary, and continues for late ones", async () => {
    const h = makeHarness();
    h.provider.push(
      { ...toolStep(["c1", "read_file", { path: "a" }]), onStart: () => h.engine.steer("also check b") },
      { ...textStep("checked"), onStart: () => h.engine.steer("and c") },
      textStep("all done"),
    );
    const events = await collect(h.engine.run(makeRequest({ prompt: "check a" })));
    expect(completion(events)).toMatchObject({ status: "completed", iterations: 3, finalText: "all done" });
    expect(h.history.messages.map((m) => `${m.role}:${m.content ?? ""}`)).toEqual([
      "user:check a",
      "assistant:",
      'tool:read_file done: {"path":"a"}',
      "user:also check b",
      "assistant:checked",
      "user:and c",
      "assistant:all done",
    ]);
  });

  it("denies a call whose permission check throws, and the turn goes on", async () => {
    class ThrowingPermissions extends PermissionEngine {
      override decide(): never {
        throw new RangeError("Maximum call stack size exceeded");
      }
    }
    const h = makeHarness({
      steps: [toolStep(["c1", "read_file", { path: "a.txt" }]), textStep("ok")],
      options: { permissions: new ThrowingPermissions({ allowedCommandPrefixes: [], hardDenyPatterns: [] }) },
    });
    const events = await collect(h.engine.run(makeRequest()));
    expect(completion(events)).toMatchObject({ status: "completed", finalText: "ok" });
    expect(resultOf(h.history.messages, "c1")).toMatch(
      /^Not run: denied by policy — the permission check could not read this call \(Maximum call stack/,
    );
    expect(h.log.ran("c1")).toBe(false);
    expect(h.audit.find((record) => record.kind === "decision")).toMatchObject({
      action: "deny",
      rule: "check_failed",
    });
  });

  it("diagnoses mangled arguments and keeps only a short preview in history", async () => {
    const raw = `{"path": "big.txt", "content": "${"x".repeat(5_000)}`;
    const h = makeHarness({
      steps: [
        { toolCalls: [{ id: "c1", name: "write_file", arguments: raw }], finishReason: "length" },
        { toolCalls: [{ id: "c2", name: "write_file", arguments: "{oops" }] },
        textStep("ok"),
      ],
    });
    await collect(h.engine.run(makeRequest()));
    expect(resultOf(h.history.messages, "c1")).toBe(TRUNCATED_ARGUMENTS_ERROR);
    expect(resultOf(h.history.messages, "c2")).toBe(MALFORMED_ARGUMENTS_ERROR);
    const stored = h.history.messages.find((m) => m.role === "assistant" && m.tool_calls?.[0]?.id === "c1");
    const args = stored?.role === "assistant" ? stored.tool_calls?.[0]?.function.arguments : undefined;
    expect(args?.length).toBeLessThan(400);
    expect(JSON.parse(args!).unparsed_arguments_preview).toContain(`[${raw.length} chars, truncated]`);
    expect(JSON.stringify(h.provider.lastRequest)).not.toContain("x".repeat(300));
    expect(h.log.spans).toEqual([]);
  });

  it("answers unknown tools, disallowed tools and invalid arguments with an error naming the problem", async () => {
    const h = makeHarness({
      steps: [
        toolStep(
          ["c1", "nope", {}],
          ["c2", "read_file", { path: 3 }],
          ["c3", "web_fetch", { url: "https://x.org" }],
        ),
        textStep("ok"),
      ],
    });
    const events = await collect(h.engine.run(makeRequest({ allowedTools: ["read_file"] })));
    expect(resultOf(h.history.messages, "c1")).toMatch(/Unknown tool "nope"/);
    expect(resultOf(h.history.messages, "c2")).toMatch(/Invalid arguments for read_file — path: /);
    expect(resultOf(h.history.messages, "c3")).toMatch(/not enabled in this conversation/);
    expect(ofType(events, "tool-call-finished").map((e) => [e.status, e.reason])).toEqual([
      ["error", "not found"],
      ["error", "invalid arguments"],
      ["denied", "not enabled"],
    ]);
    expect(completion(events).status).toBe("completed");
  });

  it("answers arguments nested too deep to walk as invalid, instead of failing the turn with an orphaned call", async () => {
    // Like an MCP tool: any JSON object passes its schema.
    const open = defineTool({
      name: "mcp_lookup",
      description: "takes any object (test)",
      inputSchema: z.looseObject({}),
      category: "read",
      risk: "low",
      concurrent: true,
      async execute() {
        return { ok: true, output: "looked up" };
      },
    });
    const depth = 100_000;
    const deep = `{"q":${'{"a":'.repeat(depth)}1${"}".repeat(depth)}}`;
    const h = makeHarness({
      extraTools: [open],
      steps: [{ toolCalls: [{ id: "c1", name: "mcp_lookup", arguments: deep }] }, textStep("ok")],
    });
    const events = await collect(h.engine.run(makeRequest()));
    expect(ofType(events, "error")).toEqual([]);
    expect(completion(events)).toMatchObject({ status: "completed", finalText: "ok" });
    expect(resultOf(h.history.messages, "c1")).toMatch(/Invalid arguments for mcp_lookup — .*nested/);
    expectNoOrphans(h.history.messages);
  });

  it("carries a tool's short summary, or the first line of a thrown error, as the finished event's reason", async () => {
    const longOutput = `${"line\n".repeat(200)}[exit code 1]`;
    const failing = defineTool({
      name: "failing",
      description: "fails (test)",
      inputSchema: z.object({ how: z.enum(["summary", "throw", "plain"]) }),
      category: "read",
      risk: "low",
      concurrent: false,
      async execute({ how }) {
        if (how === "throw") throw new Error(`${"boom ".repeat(30)}\nsecond line`);
        return how === "summary"
          ? { ok: false, output: longOutput, summary: "exit 1" }
          : { ok: false, output: "no" };
      },
    });
    const h = makeHarness({
      extraTools: [failing],
      steps: [
        toolStep(
          ["s", "failing", { how: "summary" }],
          ["t", "failing", { how: "throw" }],
          ["p", "failing", { how: "plain" }],
        ),
        textStep("ok"),
      ],
    });
    const events = await collect(h.engine.run(makeRequest()));
    const [summary, thrown, plain] = ofType(events, "tool-call-finished");
    expect(summary).toMatchObject({ status: "error", reason: "exit 1" });
    expect(summary?.outputPreview).not.toContain("exit code 1");
    expect(thrown?.status).toBe("error");
    expect(thrown?.reason).toBe(`${"boom ".repeat(12)}`.slice(0, REASON_MAX_CHARS - 1) + "…");
    expect(plain?.status).toBe("error");
    expect(plain && "reason" in plain).toBe(false);
    expect(resultOf(h.history.messages, "s")).toContain("[exit code 1]");
  });

  it("ends a provider failure with an error marker, a friendly error, and supports retry", async () => {
    const h = makeHarness({
      steps: [
        {
          text: ["par", "tial"],
          error: new ProviderError("server", "The model service had a problem.", 502),
        },
      ],
    });
    const events = await collect(h.engine.run(makeRequest({ prompt: "q" })));
    expect(completion(events).status).toBe("error");
    expect(ofType(events, "error")).toEqual([
      { type: "error", message: "The model service had a problem.", recoverable: true },
    ]);
    const history = h.history.messages;
    expect(history.at(-1)).toMatchObject({
      role: "assistant",
      content: "partial",
      meta: { error: "The model service had a problem." },
    });

    h.provider.push(textStep("recovered"));
    const retried = await collect(h.engine.retry(makeRequest({ messages: history })));
    expect(completion(retried)).toMatchObject({ status: "completed", finalText: "recovered" });
    expect(h.provider.lastRequest.messages.map((m) => m.role)).toEqual(["system", "user"]);

    const refused = await collect(h.engine.retry(makeRequest({ messages: h.history.messages })));
    expect(refused).toEqual([
      { type: "error", message: expect.stringMatching(/Nothing to retry/), recoverable: false },
    ]);
    h.provider.assertAllConsumed();
  });

  it("treats a stream that ends without finishing as an error", async () => {
    const h = makeHarness();
    const provider = {
      async *stream() {},
    };
    const engine = new TurnEngine({
      provider,
      registry: h.registry,
      permissions: freshPermissions(),
      instructions: "",
      grants: h.grants,
      facts: h.facts,
    });
    const events = await collect(engine.run(makeRequest()));
    expect(completion(events).status).toBe("error");
    expect(ofType(events, "error")[0]?.message).toMatch(/ended before it finished/);
  });

  it("refuses a second concurrent run and normalises missing or duplicate call ids", async () => {
    const h = makeHarness();
    h.provider.push(
      {
        toolCalls: [
          { id: "", name: "read_file", arguments: '{"path":"a"}' },
          { id: "dup", name: "read_file", arguments: '{"path":"b"}' },
          { id: "dup", name: "read_file", arguments: '{"path":"c"}' },
        ],
      },
      textStep("ok"),
    );
    const events = await collect(h.engine.run(makeRequest()), async (event) => {
      if (event.type === "assistant-message-done" && event.step === 1) {
        expect(h.engine.isRunning).toBe(true);
        const second = await collect(h.engine.run(makeRequest()));
        expect(second).toEqual([
          { type: "error", message: expect.stringMatching(/already running/), recoverable: true },
        ]);
      }
    });
    expect(completion(events).status).toBe("completed");
    const ids = ofType(events, "tool-call-finished").map((e) => e.callId);
    expect(new Set(ids).size).toBe(3);
    expect(ids).toContain("dup");
    expectNoOrphans(h.history.messages);
    expect(h.engine.isRunning).toBe(false);
  });

  it("is free for the next turn once a turn's events end, before its consumer reads the end", async () => {
    const h = makeHarness();
    h.provider.push(textStep("one"), textStep("two"));
    const first = h.engine.run(makeRequest());
    let step = await first.next();
    while (!step.done && step.value.type !== "turn-completed") step = await first.next();
    await new Promise((resolve) => setImmediate(resolve));
    expect(h.engine.isRunning).toBe(false);
    const second = await collect(h.engine.run(makeRequest()));
    expect(completion(second).status).toBe("completed");
    expect(await first.next()).toEqual({ value: undefined, done: true });
    // Stopping a turn that has ended stops nothing and resolves at once.
    expect(await first.return(undefined)).toEqual({ value: undefined, done: true });
  });

  it("renames a call id the model reuses from an earlier step or turn, so a stored approval never covers it", async () => {
    // Like src/approvals: a decision recorded for (call id, tool + arguments) is returned again.
    const decided = new Map<string, ApprovalOutcome | ApprovalVerdict>();
    const asked: string[] = [];
    const approver: Approver = async (request, signal) => {
      const key = `${request.callId}:${callHash(request.tool, request.args)}`;
      const known = decided.get(key);
      if (known) return known;
      asked.push(request.callId);
      const outcome = await h.broker.approver(request, signal);
      decided.set(key, outcome);
      return outcome;
    };
    const h = makeHarness({ options: { approver } });
    const engine = h.engine;
    const deploy = ["c1", "run_command", { command: "make deploy" }] as const;
    h.provider.push(toolStep(deploy), toolStep(deploy), textStep("deployed twice"));
    const approveAll = (event: AgentEvent) => {
      if (event.type === "permission-required")
        void h.broker.next(event.callId).then((p) => h.broker.approve(p.request.callId, "once"));
    };
    await collect(engine.run(makeRequest()), approveAll);
    h.provider.push(toolStep(deploy), textStep("and again"));
    await collect(engine.run(makeRequest({ messages: h.history.messages, turnId: "turn2" })), approveAll);

    expect(h.log.spans.map((s) => s.tool)).toEqual(["run_command", "run_command", "run_command"]);
    expect(asked).toHaveLength(3);
    const ids = h.history.messages
      .flatMap((m) => (m.role === "assistant" ? (m.tool_calls ?? []) : []))
      .map((c) => c.id);
    expect(new Set(ids).size).toBe(3);
    expectNoOrphans(h.history.messages);
  });

  it("replaces a call id too long or unprintable to key approvals and buttons by", async () => {
    const bloated = `call_${"x".repeat(5_000)}`;
    const h = makeHarness({
      steps: [
        toolStep(
          [bloated, "read_file", { path: "a.txt" }],
          ["id with\nnewline", "read_file", { path: "b.txt" }],
        ),
        textStep("read"),
      ],
    });
    await collect(h.engine.run(makeRequest()));
    const ids = h.history.messages
      .flatMap((m) => (m.role === "assistant" ? (m.tool_calls ?? []) : []))
      .map((c) => c.id);
    expect(ids).toHaveLength(2);
    for (const id of ids) expect(id).toMatch(/^call_\S{1,60}$/);
    expectNoOrphans(h.history.messages);
  });

  it("request snapshots passed to tools do not change when the caller mutates its inputs", async () => {
    const h = makeHarness({ steps: [textStep("ok")] });
    const messages = [{ role: "user" as const, content: "before" }];
    const request = makeRequest({ messages });
    messages.push({ role: "user", content: "injected later" });
    await collect(h.engine.run(withMessages(request, request.messages)));
    expect(h.provider.lastRequest.messages.map((m) => m.content)).toEqual([
      "You are a test agent.",
      "before",
      "do the thing",
    ]);
  });
});
