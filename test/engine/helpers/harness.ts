/**
 * Engine test harness: the test stack's TurnEngine (test/support/session-stack.ts) wired to the
 * scripted provider, the test tools, an in-memory persistence journal (and the history its turns
 * leave, read from it), an interaction broker and an audit log, plus helpers to drive a turn and
 * check the history invariants.
 */
import { expect } from "vitest";
import type { AgentEvent, EventOf } from "../../../src/core/events.js";
import { InteractionBroker } from "./interaction-broker.js";
import type { AuditRecord } from "../../../src/engine/audit-record.js";
import type { ConversationMessage } from "../../../src/core/messages.js";
import type { Grant } from "../../../src/engine/permissions/grants.js";
import { GrantSet } from "../../../src/engine/permissions/grants.js";
import {
  type ConversationExecutionRequest,
  createRequest,
  type RequestInput,
} from "../../../src/core/request.js";
import type { TurnEngineOptions, TurnPersistence } from "../../../src/engine/turn-engine.js";
import type { AnyTool, SessionFacts } from "../../../src/core/tool.js";
import { ScriptedProvider, type ScriptedStep } from "../../support/scripted-provider.js";
import { testEngine } from "../../support/session-stack.js";
import { TurnHistory } from "../../support/engine-fixtures.js";
import { RunLog, testRegistry } from "./test-tools.js";

/** An in-memory journal implementing TurnPersistence, with an optional hook on every append. */
export class MemoryPersistence implements TurnPersistence {
  readonly appended: ConversationMessage[] = [];
  readonly started = new Set<string>();
  onAppend: ((message: ConversationMessage) => void | Promise<void>) | undefined;

  /** How many messages each `append` call persisted together. */
  readonly writes: number[] = [];

  async append(messages: readonly ConversationMessage[]): Promise<void> {
    this.writes.push(messages.length);
    for (const message of messages) {
      this.appended.push(message);
      await this.onAppend?.(message);
    }
  }
  async markToolStarted(callId: string): Promise<void> {
    this.started.add(callId);
  }
  async startedToolCalls(): Promise<ReadonlySet<string>> {
    return new Set(this.started);
  }
}

export function makeRequest(overrides: Partial<RequestInput> = {}): ConversationExecutionRequest {
  return createRequest({
    prompt: "do the thing",
    messages: [],
    sessionId: "session-1",
    platform: "console",
    model: "test-model",
    workspace: { root: "/work", context: "" },
    requester: { userId: "U1", displayName: "Ann" },
    mode: "interactive",
    turnId: "turn1",
    ...overrides,
  });
}

export interface HarnessOptions {
  steps?: ScriptedStep[];
  grants?: Grant[];
  extraTools?: AnyTool[];
  interactions?: boolean;
  allowedCommandPrefixes?: string[];
  options?: Partial<TurnEngineOptions>;
}

export function makeHarness(opts: HarnessOptions = {}) {
  const provider = new ScriptedProvider(opts.steps ?? []);
  const log = new RunLog();
  const registry = testRegistry(log, opts.extraTools);
  const broker = new InteractionBroker();
  const audit: AuditRecord[] = [];
  const persistence = new MemoryPersistence();
  const grants = new GrantSet(opts.grants ?? []);
  const facts: SessionFacts = { downloadedFiles: new Set() };
  const modes: string[] = [];
  const withInteractions = opts.interactions ?? true;
  const history = new TurnHistory(persistence.appended);
  const engine = history.track(
    testEngine({
      provider,
      registry,
      allowedCommandPrefixes: opts.allowedCommandPrefixes,
      grants,
      facts,
      ...(withInteractions
        ? { approver: broker.approver, asker: broker.asker, planApprover: broker.planApprover }
        : {}),
      audit: (record) => audit.push(record),
      persistence,
      onModeChange: (mode) => modes.push(mode),
      now: () => new Date("2026-01-02T03:04:05.000Z"),
      ...opts.options,
    }),
  );
  return { engine, history, provider, log, registry, broker, audit, persistence, grants, facts, modes };
}

/** Drain a turn's events; `onEvent` may act on the engine as events arrive. */
export async function collect(
  turn: AsyncIterable<AgentEvent>,
  onEvent?: (event: AgentEvent) => void | Promise<void>,
): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const event of turn) {
    events.push(event);
    await onEvent?.(event);
  }
  return events;
}

export function ofType<T extends AgentEvent["type"]>(events: readonly AgentEvent[], type: T): EventOf<T>[] {
  return events.filter((e): e is EventOf<T> => e.type === type);
}

export function completion(events: readonly AgentEvent[]): EventOf<"turn-completed"> {
  const done = ofType(events, "turn-completed");
  expect(done).toHaveLength(1);
  return done[0]!;
}

/** The stored result of a call. */
export function resultOf(history: readonly ConversationMessage[], callId: string): string {
  const found = history.filter((m) => m.role === "tool" && m.tool_call_id === callId);
  expect(found, `exactly one result for ${callId}`).toHaveLength(1);
  return (found[0] as { content: string }).content;
}

/** Every tool call in history has exactly one result, placed after its assistant message. */
export function expectNoOrphans(history: readonly ConversationMessage[]): void {
  history.forEach((message, index) => {
    if (message.role !== "assistant") return;
    for (const call of message.tool_calls ?? []) {
      const results = history.filter((m, i) => i > index && m.role === "tool" && m.tool_call_id === call.id);
      expect(results, `result for ${call.id}`).toHaveLength(1);
    }
  });
}

/** Deep Object.isFrozen check. */
export function isDeepFrozen(value: unknown): boolean {
  if (value === null || typeof value !== "object") return true;
  if (!Object.isFrozen(value)) return false;
  return Object.values(value).every(isDeepFrozen);
}
