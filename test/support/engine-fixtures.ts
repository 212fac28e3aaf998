/**
 * Test support for the engine assembly: temporary workspaces, request snapshots for a Slack
 * thread, an in-memory store for memories, a collector for a turn's events, a plain read tool, and
 * the history an engine's turns leave as the session layer keeps it (TurnHistory).
 */
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { AgentEvent } from "../../src/core/events.js";
import type { AuditRecord } from "../../src/engine/audit-record.js";
import type { ConversationMessage, ModelMessage } from "../../src/core/messages.js";
import type { PermissionMode } from "../../src/core/modes.js";
import { GrantSet } from "../../src/engine/permissions/grants.js";
import {
  type ConversationExecutionRequest,
  createRequest,
  type RequestInput,
} from "../../src/core/request.js";
import type { TurnPersistence } from "../../src/engine/turn-engine.js";
import type { SessionTurnEngine } from "../../src/engine/session-turn-engine.js";
import type { TurnEvents } from "../../src/engine/turn-events.js";
import type { ProviderStreamEvent } from "../../src/engine/provider/provider.js";
import type { ThreadTarget } from "../../src/core/thread-target.js";
import type { EngineContext } from "../../src/sessions/engine-context.js";
import { type AnyTool, defineTool, ok } from "../../src/core/tool.js";
import { z } from "zod";

/** The Slack thread the assembly tests talk in. */
export const TARGET: ThreadTarget = { platform: "slack", workspace: "T1", channel: "C42", thread: "1700.1" };

/**
 * The history an engine's turns leave, seen as the session layer sees it: the history the last
 * turn's request carried, then what that turn persisted through its TurnPersistence (`persisted`:
 * every message the engine's persistence was handed, in order, across turns). `track` returns the
 * engine with each turn's request noted when the turn begins (its first event asked for); a turn
 * refused because another runs notes nothing. While a turn runs, `messages` holds what it
 * persisted so far (its opening user message goes out with the model's reply).
 */
export class TurnHistory {
  private base: readonly ConversationMessage[] = [];
  private from = 0;

  constructor(private readonly persisted: readonly ConversationMessage[]) {}

  /** The history as the last turn left it (a copy). */
  get messages(): ConversationMessage[] {
    return [...this.base, ...this.persisted.slice(this.from)];
  }

  /** `engine`, its turns noted here. */
  track(engine: SessionTurnEngine): SessionTurnEngine {
    const noted = (request: ConversationExecutionRequest, events: TurnEvents): TurnEvents => {
      let begun = false;
      return {
        [Symbol.asyncIterator]() {
          return this;
        },
        next: () => {
          if (!begun && !engine.isRunning) {
            this.base = request.messages;
            this.from = this.persisted.length;
          }
          begun = true;
          return events.next();
        },
        return: (value) => events.return(value),
      };
    };
    return {
      run: (request) => noted(request, engine.run(request)),
      resume: (request) => noted(request, engine.resume(request)),
      retry: (request) => noted(request, engine.retry(request)),
      interrupt: () => engine.interrupt(),
      steer: (text, attachments) => engine.steer(text, attachments),
      get isRunning() {
        return engine.isRunning;
      },
    };
  }
}

/** A fresh temporary directory (real path) and its removal. */
export async function tempDir(
  prefix = "coworker-assembly-",
): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await realpath(await mkdtemp(path.join(tmpdir(), prefix)));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** A read tool without arguments named `name`, answering `output`. */
export function readTool(name: string, output: string): AnyTool {
  return defineTool({
    name,
    description: `test tool ${name}`,
    inputSchema: z.object({}),
    category: "read",
    risk: "low",
    concurrent: true,
    execute: async () => ok(output),
  });
}

/** A request of Ana in TARGET, with overrides. */
export function request(overrides: Partial<RequestInput> = {}) {
  return createRequest({
    prompt: "hello",
    messages: [],
    sessionId: "s1",
    platform: "slack",
    model: "test-model",
    workspace: { root: "/ws", context: "" },
    requester: { userId: "U_ANA", displayName: "Ana" },
    mode: "interactive",
    surface: "thread",
    metadata: { target: TARGET },
    ...overrides,
  });
}

/** Drain a turn's events. */
export async function collect(events: AsyncIterable<AgentEvent>): Promise<AgentEvent[]> {
  const out: AgentEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

/**
 * An EngineContext for TARGET whose person-facing collaborators record what reached them, and the
 * history the turns of an engine built on it leave (`history.track` the engine).
 */
export function engineContext(overrides: Partial<EngineContext> = {}) {
  const appended: ConversationMessage[] = [];
  const started = new Set<string>();
  const approvals: string[] = [];
  const modes: PermissionMode[] = [];
  const audit: AuditRecord[] = [];
  const persistence: TurnPersistence = {
    append: async (messages) => {
      appended.push(...messages);
    },
    markToolStarted: async (callId) => {
      started.add(callId);
    },
    startedToolCalls: async () => new Set(started),
  };
  const context: EngineContext = {
    sessionId: "s1",
    target: TARGET,
    grants: new GrantSet(),
    facts: { downloadedFiles: new Set() },
    approver: async (req) => {
      approvals.push(req.tool);
      return "deny";
    },
    asker: async () => ({ answers: {} }),
    planApprover: async () => ({ approved: false, feedback: "no" }),
    persistence,
    audit: (record) => audit.push(record),
    onModeChange: (mode) => modes.push(mode),
    mode: "interactive",
    ...overrides,
  };
  return { context, appended, history: new TurnHistory(appended), approvals, modes, audit };
}

/** The names of the tools a recorded model request advertised. */
export const toolNames = (req: { readonly tools: readonly { readonly name: string }[] }) =>
  req.tools.map((tool) => tool.name);

/** The system prompt of a recorded model request. */
export function systemPrompt(req: { readonly messages: readonly ModelMessage[] }): string {
  const first = req.messages[0];
  if (first?.role !== "system" || typeof first.content !== "string") throw new Error("no system prompt");
  return first.content;
}

/** The text of the last user message of a recorded model request. */
export function lastUserText(req: { readonly messages: readonly ModelMessage[] }): string {
  const last = [...req.messages].reverse().find((m) => m.role === "user");
  if (!last || typeof last.content !== "string") throw new Error("no user message");
  return last.content;
}

/** The text of one model message when it is a user message (its text parts joined), else "". */
export function userMessageText(message: ModelMessage | undefined): string {
  if (message?.role !== "user") return "";
  return typeof message.content === "string"
    ? message.content
    : message.content.map((part) => ("text" in part ? part.text : "")).join("");
}

/** A provider's step-finished event: the step's text and its tool calls (a tool-calls finish when any). */
export function stepFinished(
  text: string,
  toolCalls: { id: string; name: string; arguments: string }[] = [],
): ProviderStreamEvent {
  return {
    type: "step-finished",
    text,
    toolCalls,
    finishReason: toolCalls.length > 0 ? "tool_calls" : "stop",
    usage: undefined,
  };
}
