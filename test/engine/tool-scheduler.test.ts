import { describe, expect, it } from "vitest";
import type { ConversationMessage } from "../../src/core/messages.js";
import { droppedCallsNote, TOOL_RESULT, tooManyCalls } from "../../src/engine/tool-results.js";
import { MAX_CONCURRENT_CALLS, MAX_TOOL_CALLS_PER_STEP } from "../../src/engine/tool-scheduler.js";
import { textStep, toolStep } from "../support/scripted-provider.js";
import {
  collect,
  completion,
  expectNoOrphans,
  makeHarness,
  makeRequest,
  ofType,
  resultOf,
} from "./helpers/harness.js";
import type { Span } from "./helpers/test-tools.js";

const overlaps = (a: Span, b: Span) => a.start < b.end! && b.start < a.end!;
const span = (spans: readonly Span[], id: string) => spans.find((s) => s.callId === id)!;

describe("tool scheduling", () => {
  it("runs adjacent concurrent-safe reads together and every write alone, in call order", async () => {
    const h = makeHarness({
      steps: [
        toolStep(
          ["r1", "read_file", { path: "a" }],
          ["r2", "grep", { pattern: "x", path: "." }],
          ["w1", "write_file", { path: "o1", content: "" }],
          ["r3", "read_file", { path: "b" }],
          ["r4", "read_file", { path: "c" }],
          ["w2", "write_file", { path: "o2", content: "" }],
        ),
        textStep("done"),
      ],
    });
    const events = await collect(h.engine.run(makeRequest({ mode: "auto" })));
    const s = h.log.spans;
    expect(overlaps(span(s, "r1"), span(s, "r2"))).toBe(true);
    expect(overlaps(span(s, "r3"), span(s, "r4"))).toBe(true);
    const writes = [span(s, "w1"), span(s, "w2")];
    for (const w of writes)
      for (const other of s)
        if (other !== w) expect(overlaps(w, other), `${w.callId} vs ${other.callId}`).toBe(false);
    // Call order between batches: reads before w1 finish before it starts; w1 ends before r3 starts.
    expect(span(s, "r2").end!).toBeLessThan(span(s, "w1").start);
    expect(span(s, "w1").end!).toBeLessThan(span(s, "r3").start);
    expect(span(s, "r4").end!).toBeLessThan(span(s, "w2").start);
    // Results are stored in call order.
    expect(h.history.messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id)).toEqual([
      "r1",
      "r2",
      "w1",
      "r3",
      "r4",
      "w2",
    ]);
    expect(completion(events).status).toBe("completed");
  });

  it("runs at most MAX_CONCURRENT_CALLS concurrent-safe calls at once, in call order", async () => {
    const n = MAX_CONCURRENT_CALLS * 2 + 3;
    const reads = Array.from({ length: n }, (_, i) => [`r${i}`, "read_file", { path: `f${i}` }] as const);
    const h = makeHarness({ steps: [toolStep(...reads), textStep("done")] });
    const events = await collect(h.engine.run(makeRequest({ mode: "auto" })));
    const s = h.log.spans;
    expect(s).toHaveLength(n);
    // The most spans running at any tick of the logical clock.
    const peak = Math.max(...s.map((a) => s.filter((b) => b.start <= a.start && a.start < b.end!).length));
    expect(peak).toBe(MAX_CONCURRENT_CALLS);
    // Batches follow call order: every call of a batch ends before the next batch starts.
    for (let i = MAX_CONCURRENT_CALLS; i < n; i++)
      expect(span(s, `r${i - MAX_CONCURRENT_CALLS}`).end!).toBeLessThan(span(s, `r${i}`).start);
    expect(h.history.messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id)).toEqual(
      reads.map(([id]) => id),
    );
    expect(completion(events).status).toBe("completed");
  });

  it("drops the calls past MAX_TOOL_CALLS_PER_STEP before storing the step, and runs the rest", async () => {
    const extra = 5;
    const calls = Array.from(
      { length: MAX_TOOL_CALLS_PER_STEP + extra },
      (_, i) => [`c${i}`, "read_file", { path: `f${i}` }] as const,
    );
    // A write past the limit does not run, even in auto mode.
    const h = makeHarness({
      steps: [toolStep(...calls, ["w1", "write_file", { path: "o", content: "" }]), textStep("done")],
    });
    const events = await collect(h.engine.run(makeRequest({ mode: "auto" })));
    const kept = calls.slice(0, MAX_TOOL_CALLS_PER_STEP).map(([id]) => id);
    expect(h.log.spans.map((sp) => sp.callId)).toEqual(kept);
    for (const id of kept) expect(resultOf(h.history.messages, id)).toMatch(/^read_file done/);
    expectNoOrphans(h.history.messages);
    // Results in call order, for the kept calls only; one notice, no status line per dropped call.
    expect(h.history.messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id)).toEqual(kept);
    expect(ofType(events, "tool-call-finished")).toHaveLength(MAX_TOOL_CALLS_PER_STEP);
    const notices = ofType(events, "notice").filter((e) => e.message.includes("tool calls in one step"));
    expect(notices.map((e) => e.message)).toEqual([
      `The agent asked for ${MAX_TOOL_CALLS_PER_STEP + extra + 1} tool calls in one step; only the first ${MAX_TOOL_CALLS_PER_STEP} were considered, the other ${extra + 1} were not run.`,
    ]);
    expect(completion(events).status).toBe("completed");
  });

  it("stores at most MAX_TOOL_CALLS_PER_STEP calls of a 200-call step, and the next request keeps the tool-call contract", async () => {
    const asked = 200;
    const calls = Array.from({ length: asked }, (_, i) => [`c${i}`, "read_file", { path: `f${i}` }] as const);
    const h = makeHarness({ steps: [toolStep(...calls), textStep("done")] });
    const events = await collect(h.engine.run(makeRequest({ mode: "auto" })));
    expect(completion(events).status).toBe("completed");

    // What was persisted: the assistant message holds the first 64 calls, each with one result.
    const stored = h.persistence.appended;
    const steps = stored.filter((m) => m.role === "assistant" && m.tool_calls?.length);
    expect(steps).toHaveLength(1);
    const step = steps[0] as Extract<ConversationMessage, { role: "assistant" }>;
    const kept = calls.slice(0, MAX_TOOL_CALLS_PER_STEP).map(([id]) => id);
    expect(step.tool_calls!.map((c) => c.id)).toEqual(kept);
    expect(step.meta?.droppedToolCalls).toBe(asked - MAX_TOOL_CALLS_PER_STEP);
    const results = stored.filter((m) => m.role === "tool");
    expect(results).toHaveLength(MAX_TOOL_CALLS_PER_STEP);
    expectNoOrphans(stored);
    expect(JSON.stringify(stored)).not.toContain(`"c${MAX_TOOL_CALLS_PER_STEP}"`);

    // The model is told once, on the first kept call's result.
    const note = droppedCallsNote(MAX_TOOL_CALLS_PER_STEP, asked - MAX_TOOL_CALLS_PER_STEP);
    expect(resultOf(stored, "c0")).toMatch(/^read_file done/);
    expect(resultOf(stored, "c0").endsWith(note)).toBe(true);
    expect(results.filter((m) => m.content.includes(note))).toHaveLength(1);

    // The next request: every call id has exactly one tool result, right after its message, and
    // no tool result names a call that is not in the assistant message before it.
    expect(h.provider.requests).toHaveLength(2);
    const sent = h.provider.requests[1]!.messages;
    let open = new Set<string>();
    let answered = 0;
    for (const message of sent) {
      if (message.role === "tool") {
        expect(open.delete(message.tool_call_id), `result for unknown call ${message.tool_call_id}`).toBe(
          true,
        );
        answered++;
      } else {
        expect([...open], "calls left without a result").toEqual([]);
        open = new Set(message.role === "assistant" ? (message.tool_calls ?? []).map((c) => c.id) : []);
      }
    }
    expect([...open]).toEqual([]);
    expect(answered).toBe(MAX_TOOL_CALLS_PER_STEP);
    const sentCalls = sent.flatMap((m) => (m.role === "assistant" ? (m.tool_calls ?? []) : []));
    expect(sentCalls).toHaveLength(MAX_TOOL_CALLS_PER_STEP);

    // The person is told once.
    const notices = ofType(events, "notice").filter((e) => e.message.includes("tool calls in one step"));
    expect(notices).toHaveLength(1);
    expect(ofType(events, "tool-call-finished")).toHaveLength(MAX_TOOL_CALLS_PER_STEP);
  });

  it("still answers the calls past the limit in a history stored before they were dropped", async () => {
    const calls = Array.from({ length: MAX_TOOL_CALLS_PER_STEP + 3 }, (_, i) => ({
      id: `o${i}`,
      type: "function" as const,
      function: { name: "read_file", arguments: JSON.stringify({ path: `f${i}` }) },
    }));
    const h = makeHarness({ steps: [textStep("done")] });
    const messages: ConversationMessage[] = [
      { role: "user", content: "go" },
      { role: "assistant", content: null, tool_calls: calls },
    ];
    await collect(h.engine.resume(makeRequest({ mode: "auto", messages })));
    expectNoOrphans(h.history.messages);
    expect(h.log.spans).toHaveLength(MAX_TOOL_CALLS_PER_STEP);
    expect(resultOf(h.history.messages, `o${MAX_TOOL_CALLS_PER_STEP}`)).toBe(
      tooManyCalls(MAX_TOOL_CALLS_PER_STEP),
    );
  });

  it("authorises every call in order before any write runs", async () => {
    const h = makeHarness({
      steps: [
        toolStep(
          ["w1", "write_file", { path: "a", content: "" }],
          ["r1", "read_file", { path: "x" }],
          ["x1", "run_command", { command: "make" }],
        ),
        textStep("ok"),
      ],
    });
    const turn = collect(h.engine.run(makeRequest()));
    expect((await h.broker.next()).request.callId).toBe("w1");
    expect(h.broker.approve("w1", "once")).toBe(true);
    expect((await h.broker.next("x1")).request.callId).toBe("x1");
    expect(h.log.spans).toEqual([]); // nothing ran while x1 still waits for a decision
    h.broker.approve("x1", "once");
    const events = await turn;
    expect(ofType(events, "permission-required").map((e) => e.callId)).toEqual(["w1", "x1"]);
    expect(h.log.spans.map((s) => s.callId)).toEqual(["w1", "r1", "x1"]);
    expectNoOrphans(h.history.messages);
  });

  it("ignores a stale approval for another call id", async () => {
    const h = makeHarness({
      steps: [toolStep(["w2", "write_file", { path: "a", content: "" }]), textStep("ok")],
    });
    const turn = collect(h.engine.run(makeRequest()));
    await h.broker.next("w2");
    expect(h.broker.approve("w1-from-an-old-card", "once")).toBe(false);
    expect(h.broker.pending().map((p) => p.request.callId)).toEqual(["w2"]);
    expect(h.log.spans).toEqual([]);
    expect(h.broker.approve("w2", "deny")).toBe(true);
    expect(h.broker.approve("w2", "once")).toBe(false); // a second press changes nothing
    const events = await turn;
    expect(resultOf(h.history.messages, "w2")).toBe(TOOL_RESULT.deniedByUser);
    expect(ofType(events, "tool-call-finished")[0]).toMatchObject({
      status: "denied",
      reason: "denied by you",
    });
    expect(h.log.spans).toEqual([]);
  });

  it("applies 'always' outcomes as grants that cover later calls", async () => {
    const h = makeHarness({
      steps: [
        toolStep(["c1", "run_command", { command: "npm test" }]),
        toolStep(
          ["c2", "run_command", { command: "npm test" }],
          ["c3", "run_command", { command: "npm run build" }],
        ),
        textStep("ok"),
      ],
    });
    const turn = collect(h.engine.run(makeRequest()));
    const first = await h.broker.next("c1");
    expect(first.kind === "approval" && first.request.alwaysOptions).toEqual(["always_command"]);
    h.broker.approve("c1", "always_command");
    await h.broker.next("c3");
    h.broker.approve("c3", "deny");
    const events = await turn;
    expect(h.grants.list()).toEqual([{ kind: "command", command: "npm test" }]);
    expect(ofType(events, "permission-required").map((e) => e.callId)).toEqual(["c1", "c3"]);
    expect(h.log.spans.map((s) => s.callId)).toEqual(["c1", "c2"]);
  });

  it("answers 'approval isn't available here' when no approver is injected", async () => {
    const h = makeHarness({
      interactions: false,
      steps: [
        toolStep(
          ["c1", "write_file", { path: "a", content: "" }],
          ["q1", "ask_user", { question: "which?" }],
          ["p1", "propose_plan", { plan: "x" }],
        ),
        textStep("ok"),
      ],
    });
    await collect(h.engine.run(makeRequest()));
    expect(resultOf(h.history.messages, "c1")).toBe(TOOL_RESULT.approvalUnavailable);
    expect(resultOf(h.history.messages, "q1")).toBe(TOOL_RESULT.askUnavailable);
    expect(resultOf(h.history.messages, "p1")).toMatch(/only available in plan mode/);
    const plan = makeHarness({
      interactions: false,
      steps: [toolStep(["p2", "propose_plan", { plan: "x" }]), textStep("ok")],
    });
    await collect(plan.engine.run(makeRequest({ mode: "plan" })));
    expect(resultOf(plan.history.messages, "p2")).toBe(TOOL_RESULT.planUnavailable);
  });

  it("never lets a grant, auto mode or an approval run a hard-denied call", async () => {
    const h = makeHarness({
      grants: [
        { kind: "tool", tool: "run_command" },
        { kind: "command", command: "rm -rf /" },
      ],
      allowedCommandPrefixes: ["rm"],
      steps: [toolStep(["c1", "run_command", { command: "rm -rf /" }]), textStep("ok")],
    });
    const events = await collect(h.engine.run(makeRequest({ mode: "auto" })));
    expect(ofType(events, "permission-required")).toEqual([]);
    expect(resultOf(h.history.messages, "c1")).toMatch(
      /^Not run: denied by policy — blocked by a hard-deny rule/,
    );
    expect(ofType(events, "tool-call-finished")[0]).toMatchObject({
      status: "denied",
      reason: "denied by policy",
    });
    expect(h.log.spans).toEqual([]);
  });

  it("asks for every action triggered by channel content, even in auto mode", async () => {
    const h = makeHarness({
      grants: [{ kind: "tool", tool: "send_message" }],
      steps: [
        toolStep(["c1", "send_message", { text: "hi" }], ["c2", "read_file", { path: "a" }]),
        textStep("ok"),
      ],
    });
    const request = makeRequest({
      mode: "auto",
      metadata: { channelContent: { channel: "#general", quote: "ping all" } },
    });
    const turn = collect(h.engine.run(request));
    const pending = await h.broker.next("c1");
    h.broker.approve("c1", "always_tool");
    const events = await turn;
    expect(ofType(events, "permission-required")).toEqual([
      expect.objectContaining({
        callId: "c1",
        provenance: { kind: "channel_content", channel: "#general", quote: "ping all" },
        alwaysOptions: [],
      }),
    ]);
    expect(pending.kind === "approval" && pending.request.provenance.kind).toBe("channel_content");
    expect(h.grants.list()).toEqual([{ kind: "tool", tool: "send_message" }]); // "always" not applicable: no new grant
    expect(h.history.messages[0]).toMatchObject({ role: "user", meta: { untrusted: true } });
  });

  it("writes audit records for proposal, decision, approval and result", async () => {
    const h = makeHarness({
      steps: [toolStep(["c1", "write_file", { path: "a", content: "" }]), textStep("ok")],
    });
    const turn = collect(h.engine.run(makeRequest()));
    await h.broker.next("c1");
    h.broker.approve("c1", "once");
    await turn;
    expect(h.audit.map((r) => r.kind)).toEqual([
      "proposal",
      "decision",
      "approval_requested",
      "approval_resolved",
      "result",
    ]);
    expect(h.audit[1]).toMatchObject({
      action: "ask",
      rule: "default:ask",
      sessionId: "session-1",
      turnId: "turn1",
    });
    expect(h.audit[3]).toMatchObject({ outcome: "once", callId: "c1", tool: "write_file" });
    expect(h.audit[4]).toMatchObject({ status: "ok", at: "2026-01-02T03:04:05.000Z" });
  });

  it("keeps going with a warning when the audit sink throws", async () => {
    const h = makeHarness({
      steps: [toolStep(["c1", "read_file", { path: "a" }]), textStep("ok")],
      options: {
        audit: () => {
          throw new Error("disk full");
        },
      },
    });
    const events = await collect(h.engine.run(makeRequest()));
    expect(completion(events).status).toBe("completed");
    expect(ofType(events, "notice")[0]?.message).toMatch(/disk full/);
  });
});

describe("interactive tools", () => {
  it("ask_user goes to the asker and returns the answers", async () => {
    const h = makeHarness({
      steps: [
        toolStep([
          "q1",
          "ask_user",
          { question: "Which db?", options: ["pg", "sqlite"], questions: [{ question: "Port?" }] },
        ]),
        textStep("ok"),
      ],
    });
    const turn = collect(h.engine.run(makeRequest()));
    const asked = await h.broker.next("q1");
    expect(asked.kind === "question" && asked.request.questions).toEqual([
      { id: "q1", question: "Which db?", options: ["pg", "sqlite"] },
      { id: "q2", question: "Port?", options: [] },
    ]);
    h.broker.answer("q1", { q1: "pg", q2: "5432" });
    const events = await turn;
    expect(ofType(events, "question-asked")[0]?.questions).toHaveLength(2);
    expect(JSON.parse(resultOf(h.history.messages, "q1"))).toEqual({
      answers: [
        { question: "Which db?", answer: "pg" },
        { question: "Port?", answer: "5432" },
      ],
    });
  });

  it("an approved plan switches the mode for the steps after its own: a call beside it stays a plan-mode call", async () => {
    const h = makeHarness({
      steps: [
        toolStep(
          ["p1", "propose_plan", { plan: "1. edit a" }],
          ["w0", "write_file", { path: "a", content: "" }],
        ),
        toolStep(["w1", "write_file", { path: "a", content: "" }]),
        textStep("implemented"),
      ],
    });
    const turn = collect(h.engine.run(makeRequest({ mode: "plan" })));
    const proposal = await h.broker.next("p1");
    expect(proposal.kind === "plan" && proposal.request.plan).toBe("1. edit a");
    h.broker.decidePlan("p1", { approved: true, mode: "auto" });
    const events = await turn;
    expect(h.modes).toEqual(["auto"]);
    expect(resultOf(h.history.messages, "p1")).toMatch(/Plan approved\. The session is now in auto mode/);
    expect(h.log.spans.map((s) => s.callId)).toEqual(["w1"]);
    expect(ofType(events, "tool-call-finished").find((e) => e.callId === "w0")?.status).toBe("denied");
    expect(h.provider.requests[0]?.tools.map((t) => t.name)).not.toContain("write_file");
    expect(h.provider.requests[1]?.tools.map((t) => t.name)).toContain("write_file");
    expect(completion(events).status).toBe("completed");
  });

  it("a command made beside a plan approved into auto is decided in plan mode, not run in auto", async () => {
    const h = makeHarness({
      steps: [
        toolStep(
          ["p1", "propose_plan", { plan: "1. Read the README.\n2. Summarise it." }],
          ["c1", "run_command", { command: "git push --force origin main" }],
        ),
        textStep("done"),
      ],
    });
    const turn = collect(h.engine.run(makeRequest({ mode: "plan" })));
    await h.broker.next("p1");
    h.broker.decidePlan("p1", { approved: true, mode: "auto" });
    const events = await turn;
    expect(h.modes).toEqual(["auto"]);
    expect(h.log.spans.map((s) => s.callId)).toEqual([]);
    expect(ofType(events, "tool-call-finished").find((e) => e.callId === "c1")?.status).toBe("denied");
  });

  it("a rejected plan keeps plan mode and passes the feedback on", async () => {
    const h = makeHarness({ steps: [toolStep(["p1", "propose_plan", { plan: "x" }]), textStep("revising")] });
    const turn = collect(h.engine.run(makeRequest({ mode: "plan" })));
    await h.broker.next("p1");
    h.broker.decidePlan("p1", { approved: false, feedback: "add tests" });
    await turn;
    expect(resultOf(h.history.messages, "p1")).toBe(
      "Plan not approved. Their feedback: add tests Revise the plan and propose it again.",
    );
    expect(h.modes).toEqual([]);
  });
});
