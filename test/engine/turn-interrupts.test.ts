import { describe, expect, it } from "vitest";
import { TOOL_RESULT } from "../../src/engine/tool-results.js";
import { TurnEngine } from "../../src/engine/turn-engine.js";
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
import { freshPermissions } from "./helpers/test-tools.js";

const WORDINGS = [
  TOOL_RESULT.deniedByUser,
  TOOL_RESULT.notStarted,
  TOOL_RESULT.notStartedWhileWaiting,
  TOOL_RESULT.interruptedWhileRunning,
];

describe("interrupt", () => {
  it("has a distinct wording for each way a call can end without running to completion", () => {
    expect(new Set(WORDINGS).size).toBe(WORDINGS.length);
    expect(TOOL_RESULT.interruptedWhileRunning).toMatch(/may have partly run/);
  });

  it("mid-stream: aborts the model request at once and keeps the partial text", async () => {
    const h = makeHarness({ steps: [{ text: ["Let me ", "look"], hang: true }] });
    const events = await collect(h.engine.run(makeRequest()), (event) => {
      if (event.type === "text-delta" && event.delta === "look") h.engine.interrupt();
    });
    expect(h.provider.signals[0]?.aborted).toBe(true);
    expect(completion(events)).toMatchObject({ status: "interrupted", iterations: 1 });
    expect(h.history.messages.at(-1)).toMatchObject({
      role: "assistant",
      content: "Let me look",
      meta: { interrupted: true },
    });
    expect(h.history.messages.at(-1)).not.toHaveProperty("tool_calls");
    expect(h.persistence.appended.at(-1)).toMatchObject({ content: "Let me look" });
    expect(ofType(events, "error")).toEqual([]);
  });

  it("before the model said anything: the held user message is still persisted when the turn ends", async () => {
    const h = makeHarness({ steps: [{ text: [], hang: true, onStart: () => h.engine.interrupt() }] });
    const events = await collect(h.engine.run(makeRequest({ prompt: "are you there?" })));
    expect(completion(events).status).toBe("interrupted");
    expect(h.persistence.appended).toEqual([
      expect.objectContaining({ role: "user", content: "are you there?" }),
    ]);
    expect(h.persistence.writes).toEqual([1]);
  });

  it("mid-stream: works even when the provider ignores the abort signal", async () => {
    const h = makeHarness();
    const stubborn = {
      async *stream() {
        yield { type: "text-delta" as const, delta: "partial" };
        await new Promise(() => undefined); // never settles, never checks the signal
      },
    };
    const engine = h.history.track(
      new TurnEngine({
        provider: stubborn,
        registry: h.registry,
        permissions: freshPermissions(),
        instructions: "",
        grants: h.grants,
        facts: h.facts,
        persistence: h.persistence,
      }),
    );
    const events = await collect(engine.run(makeRequest()), (event) => {
      if (event.type === "text-delta") engine.interrupt();
    });
    expect(completion(events).status).toBe("interrupted");
    expect(h.history.messages.at(-1)).toMatchObject({ role: "assistant", content: "partial" });
  });

  it("mid-tool: the running call may have partly run, the rest did not start", async () => {
    const h = makeHarness({
      steps: [
        toolStep(
          ["w1", "write_file", { path: "a", content: "" }],
          ["w2", "write_file", { path: "b", content: "" }],
        ),
      ],
    });
    h.log.block("w1");
    const turn = collect(h.engine.run(makeRequest({ mode: "auto" })));
    await h.log.started("w1");
    h.engine.interrupt();
    const events = await turn;
    expect(resultOf(h.history.messages, "w1")).toBe(TOOL_RESULT.interruptedWhileRunning);
    expect(resultOf(h.history.messages, "w2")).toBe(TOOL_RESULT.notStarted);
    expect(ofType(events, "tool-call-finished").map((e) => [e.callId, e.status])).toEqual([
      ["w1", "interrupted"],
      ["w2", "not_started"],
    ]);
    expect(h.log.ran("w2")).toBe(false);
    expect(completion(events).status).toBe("interrupted");
    expect(h.provider.requests).toHaveLength(1);
    expectNoOrphans(h.history.messages);
  });

  it("mid-tool in a concurrent batch: finished reads keep their results", async () => {
    const h = makeHarness({
      steps: [toolStep(["r1", "read_file", { path: "a" }], ["r2", "read_file", { path: "b" }])],
    });
    h.log.block("r2");
    const turn = collect(h.engine.run(makeRequest()), (event) => {
      if (event.type === "tool-call-finished" && event.callId === "r1") h.engine.interrupt();
    });
    const events = await turn;
    expect(resultOf(h.history.messages, "r1")).toMatch(/read_file done/);
    expect(resultOf(h.history.messages, "r2")).toBe(TOOL_RESULT.interruptedWhileRunning);
    expect(completion(events).status).toBe("interrupted");
    expectNoOrphans(h.history.messages);
  });

  it("awaiting an approval: the wait resolves as interrupted and nothing runs", async () => {
    const h = makeHarness({
      steps: [
        toolStep(
          ["r1", "read_file", { path: "a" }],
          ["w1", "write_file", { path: "b", content: "" }],
          ["w2", "write_file", { path: "c", content: "" }],
        ),
      ],
    });
    const turn = collect(h.engine.run(makeRequest()));
    await h.broker.next("w1");
    h.engine.interrupt();
    const events = await turn;
    expect(resultOf(h.history.messages, "r1")).toBe(TOOL_RESULT.notStarted); // cleared, but the step never executed
    expect(resultOf(h.history.messages, "w1")).toBe(TOOL_RESULT.notStartedWhileWaiting);
    expect(resultOf(h.history.messages, "w2")).toBe(TOOL_RESULT.notStarted);
    expect(h.log.spans).toEqual([]);
    expect(h.broker.pending()).toEqual([]);
    expect(h.audit.find((r) => r.kind === "approval_resolved")).toMatchObject({ outcome: "interrupted" });
    expect(completion(events).status).toBe("interrupted");
    expectNoOrphans(h.history.messages);
  });

  it("awaiting a question: answered as not started", async () => {
    const h = makeHarness({ steps: [toolStep(["q1", "ask_user", { question: "?" }])] });
    const turn = collect(h.engine.run(makeRequest()));
    await h.broker.next("q1");
    h.engine.interrupt();
    const events = await turn;
    expect(resultOf(h.history.messages, "q1")).toBe(TOOL_RESULT.notStartedWhileWaiting);
    expect(h.broker.answer("q1", { q1: "late" })).toBe(false);
    expect(completion(events).status).toBe("interrupted");
  });

  it("between steps: no further model call is made", async () => {
    const h = makeHarness({ steps: [toolStep(["r1", "read_file", { path: "a" }]), textStep("never sent")] });
    h.persistence.onAppend = (message) => {
      if (message.role === "tool") h.engine.interrupt();
    };
    const events = await collect(h.engine.run(makeRequest()));
    expect(resultOf(h.history.messages, "r1")).toMatch(/read_file done/);
    expect(h.provider.requests).toHaveLength(1);
    expect(completion(events)).toMatchObject({ status: "interrupted", iterations: 1 });
    expectNoOrphans(h.history.messages);
  });

  it("a consumer that stops listening stops the turn", async () => {
    const h = makeHarness({ steps: [{ text: ["a"], hang: true }] });
    for await (const event of h.engine.run(makeRequest())) if (event.type === "text-delta") break;
    expect(h.provider.signals[0]?.aborted).toBe(true);
    expect(h.engine.isRunning).toBe(false);
  });

  it("an interrupt when nothing runs is a no-op, and steering waits for the next turn", async () => {
    const h = makeHarness({ steps: [textStep("ok")] });
    h.engine.interrupt();
    h.engine.steer("queued before the turn");
    const events = await collect(h.engine.run(makeRequest({ prompt: "hi" })));
    expect(completion(events).status).toBe("completed");
    expect(h.history.messages.map((m) => m.content)).toEqual(["hi", "queued before the turn", "ok"]);
  });
});
