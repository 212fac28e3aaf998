import { describe, expect, it } from "vitest";
import type { Card } from "../../src/core/card.js";
import { approvalOutcomeOf, observeOutputs } from "../../src/app/observed-output.js";
import { observeService } from "../../src/app/observed-service.js";
import { type AgentEvent, agentEvent } from "../../src/core/events.js";
import { createMetrics } from "../../src/ops/metrics.js";
import type { ConversationService } from "../../src/sessions/contracts.js";
import type { InboundMessage } from "../../src/core/inbound-message.js";
import type { ThreadOutputFactory } from "../../src/core/thread-output.js";
import type { ThreadTarget } from "../../src/core/thread-target.js";
import { RecordingOutput } from "../support/recording-output.js";
import { cardPress } from "../support/card-press.js";
import { sample } from "./run-coworker.js";

const TARGET: ThreadTarget = { platform: "slack", workspace: "T1", channel: "C1", thread: "1.2" };
const IDS = { sessionId: "s1", turnId: "t1" };

function setup() {
  const metrics = createMetrics({ processMetrics: false });
  let refs = 0;
  const inner = new RecordingOutput(
    TARGET,
    () => undefined,
    () => `ref-${++refs}`,
    async () => undefined,
  );
  let now = 0;
  const clock = () => now;
  const factory = observeOutputs("slack", () => inner, metrics, clock);
  return {
    metrics,
    inner,
    output: factory(TARGET),
    advance: (ms: number) => {
      now += ms;
    },
    metric: async (name: string, labels: Record<string, string> = {}) =>
      sample(await metrics.render(), name, labels),
  };
}

const permission = (callId: string): AgentEvent =>
  agentEvent({
    type: "permission-required",
    callId,
    tool: "write_file",
    args: { path: "a.txt" },
    reason: "writes a file",
    category: "write",
    provenance: { kind: "user" },
    alwaysOptions: ["always_tool"],
  });

const finished = (callId: string, name: string, status: "ok" | "denied", durationMs: number): AgentEvent =>
  agentEvent({ type: "tool-call-finished", callId, name, status, outputPreview: "", files: [], durationMs });

const completed = (status: "completed" | "error"): AgentEvent =>
  agentEvent({ type: "turn-completed", status, iterations: 2, finalText: "done", usage: undefined });

describe("observeOutputs", () => {
  it("counts a turn, its tool calls and its approvals while the channel renders every event", async () => {
    const { inner, output, advance, metric } = setup();
    const renderer = output.beginTurn(IDS);
    expect(await metric("coworker_turns_running", { platform: "slack" })).toBe(1);
    const events = [
      finished("c1", "read_file", "ok", 40),
      permission("c2"),
      finished("c2", "write_file", "ok", 250),
      permission("c3"),
      finished("c3", "write_file", "denied", 0),
      completed("completed"),
    ];
    for (const event of events.slice(0, 2)) await renderer.handle(event);
    expect(await metric("coworker_approvals_pending", { platform: "slack" })).toBe(1);
    advance(1500);
    for (const event of events.slice(2)) await renderer.handle(event);
    await renderer.close();

    expect(inner.turns[0]?.events).toEqual(events);
    expect(inner.turns[0]?.closed).toBe(true);
    expect(await metric("coworker_turns_total", { platform: "slack", status: "completed" })).toBe(1);
    expect(await metric("coworker_turns_running", { platform: "slack" })).toBe(0);
    expect(await metric("coworker_turn_duration_seconds_sum", { platform: "slack" })).toBe(1.5);
    expect(await metric("coworker_tool_calls_total", { tool: "read_file", status: "ok" })).toBe(1);
    expect(await metric("coworker_tool_calls_total", { tool: "write_file", status: "ok" })).toBe(1);
    expect(await metric("coworker_tool_calls_total", { tool: "write_file", status: "denied" })).toBe(1);
    expect(await metric("coworker_tool_call_duration_seconds_sum", { tool: "write_file" })).toBe(0.25);
    expect(await metric("coworker_approvals_pending", { platform: "slack" })).toBe(0);
    expect(
      await metric("coworker_approvals_resolved_total", { platform: "slack", outcome: "approved" }),
    ).toBe(1);
    expect(await metric("coworker_approvals_resolved_total", { platform: "slack", outcome: "denied" })).toBe(
      1,
    );
  });

  it("counts a turn closed without turn-completed as interrupted, and its open approval as abandoned, once", async () => {
    const { output, metric } = setup();
    const renderer = output.beginTurn(IDS);
    await renderer.handle(permission("c1"));
    await renderer.close();
    await renderer.close();
    expect(await metric("coworker_turns_total", { platform: "slack", status: "interrupted" })).toBe(1);
    expect(await metric("coworker_turns_running", { platform: "slack" })).toBe(0);
    expect(await metric("coworker_approvals_pending", { platform: "slack" })).toBe(0);
    expect(
      await metric("coworker_approvals_resolved_total", { platform: "slack", outcome: "abandoned" }),
    ).toBe(1);
  });

  it("counts error events and a failing renderer, passing the renderer's error on", async () => {
    const { inner, output, metric } = setup();
    const broken = new Error("chat.update failed");
    inner.beginTurn = () => ({
      handle: async () => {
        throw broken;
      },
      close: async () => undefined,
    });
    const renderer = output.beginTurn(IDS);
    await expect(
      renderer.handle(agentEvent({ type: "error", message: "model failed", recoverable: true })),
    ).rejects.toBe(broken);
    await expect(renderer.handle(completed("error"))).rejects.toBe(broken);
    await renderer.close();
    expect(await metric("coworker_errors_total", { area: "turn" })).toBe(1);
    expect(await metric("coworker_errors_total", { area: "slack" })).toBe(2);
    expect(await metric("coworker_turns_total", { platform: "slack", status: "error" })).toBe(1);
  });

  it("hands on a renderer's undefined as undefined (nothing to wait for), and counts a renderer that throws", async () => {
    const { inner, output, metric } = setup();
    const broken = new Error("render failed");
    let fail = false;
    inner.beginTurn = () => ({
      handle: () => {
        if (fail) throw broken;
        return undefined;
      },
      close: async () => undefined,
    });
    const renderer = output.beginTurn(IDS);
    expect(renderer.handle(permission("c1"))).toBeUndefined();
    fail = true;
    expect(() => renderer.handle(completed("completed"))).toThrow(broken);
    expect(await metric("coworker_errors_total", { area: "slack" })).toBe(1);
  });

  it("keeps tool labels bounded: a tool the model made up is counted as unknown", async () => {
    const { output, metric, metrics } = setup();
    const renderer = output.beginTurn(IDS);
    for (let i = 0; i < 50; i++)
      await renderer.handle(
        agentEvent({
          type: "tool-call-finished",
          callId: `x${i}`,
          name: `invented_tool_${i}`,
          status: "error",
          outputPreview: "",
          files: [],
          durationMs: 0,
          reason: "not found",
        }),
      );
    await renderer.close();
    expect(await metric("coworker_tool_calls_total", { tool: "unknown", status: "error" })).toBe(50);
    expect(await metrics.render()).not.toContain("invented_tool_");
  });

  it("bounds label values from outside the code: odd names are unknown, past the budget other", async () => {
    const metrics = createMetrics({ processMetrics: false });
    metrics.toolCallFinished('x"} 1\nevil{a="', "ok", 1);
    for (let i = 0; i < 250; i++) metrics.modelRequestFinished(`model-${i}`, "ok", 1);
    const text = await metrics.render();
    expect(sample(text, "coworker_tool_calls_total", { tool: "unknown", status: "ok" })).toBe(1);
    expect(
      sample(text, "coworker_model_request_duration_seconds_count", { model: "model-199", outcome: "ok" }),
    ).toBe(1);
    expect(
      sample(text, "coworker_model_request_duration_seconds_count", { model: "other", outcome: "ok" }),
    ).toBe(50);
    expect(text).not.toContain("model-200");
  });

  it("passes cards and texts straight through", async () => {
    const { inner, output } = setup();
    const card: Card = { pendingId: "p1", kind: "approval", title: "Write?", blocks: [], buttons: [] };
    const ref = await output.postCard(card);
    await output.updateCard(ref, { ...card, outcome: { text: "Approved by Ana" } });
    await output.postText("hello");
    expect(ref).toEqual({ messageId: "ref-1" });
    expect(inner.cards[0]?.versions.map((version) => version.outcome)).toEqual([
      undefined,
      { text: "Approved by Ana" },
    ]);
    expect(inner.texts).toEqual(["hello"]);
  });

  it("maps a call's final status to the approval's outcome", () => {
    expect(
      ["ok", "error", "denied", "interrupted", "not_started"].map((s) => approvalOutcomeOf(s as never)),
    ).toEqual(["approved", "approved", "denied", "interrupted", "interrupted"]);
  });
});

/** A ConversationService that records registrations and answers every message "started". */
function stubService(extra: Partial<ConversationService> = {}) {
  const factories = new Map<string, ThreadOutputFactory>();
  const received: InboundMessage[] = [];
  const service: ConversationService = {
    registerOutput: (platform, factory) => factories.set(platform, factory),
    receive: async (message) => {
      received.push(message);
      return { status: "started" };
    },
    press: async () => ({ status: "unknown", message: "no such card" }),
    command: async (_target, _user, name, _args, options) =>
      `ran ${name}${options?.privately ? " privately" : ""}`,
    firstDelivery: async () => true,
    ...extra,
  };
  return { service, factories, received };
}

describe("observeService", () => {
  it("observes every registered platform, counts inbound results and forwards the rest", async () => {
    const metrics = createMetrics({ processMetrics: false });
    const stub = stubService();
    const service = observeService(stub.service, metrics);
    expect(service.hasSession).toBeUndefined();
    const { inner } = setup();
    service.registerOutput("slack", () => inner);
    const output = stub.factories.get("slack")?.(TARGET);
    output?.beginTurn(IDS);
    expect(sample(await metrics.render(), "coworker_turns_running", { platform: "slack" })).toBe(1);
    expect(inner.turns).toHaveLength(1);

    const message: InboundMessage = {
      dedupeKeys: ["k1"],
      target: TARGET,
      user: { id: "U1", name: "Ana" },
      text: "hi",
      files: [],
      sentAt: new Date(0).toISOString(),
    };
    expect(await service.receive(message)).toEqual({ status: "started" });
    expect(stub.received).toEqual([message]);
    const counted = sample(await metrics.render(), "coworker_inbound_messages_total", {
      platform: "slack",
      result: "started",
    });
    expect(counted).toBe(1);
    expect(await service.command(TARGET, message.user, "status", [])).toBe("ran status");
    expect(await service.command(TARGET, message.user, "schedules", [], { privately: true })).toBe(
      "ran schedules privately",
    );
    expect(await service.press(cardPress(TARGET, "p", "once", message.user))).toMatchObject({
      status: "unknown",
    });

    const withSession = observeService(stubService({ hasSession: async () => true }).service, metrics);
    expect(await withSession.hasSession?.(TARGET)).toBe(true);
  });
});
