/**
 * AgentEvent: the typed event stream one turn produces, and the only way the engine talks to
 * its callers. Every event is frozen when created (use the `event` helpers).
 *
 * Naming guide for event types (follow it when adding one):
 * - kebab-case, subject first: `tool-call-started`, never `started-tool-call`.
 * - Streamed fragments end in `-delta` and carry `delta: string` (`text-delta`, `tool-output-delta`).
 * - A fact that happened is a past participle: `-started`, `-finished`, `-updated`, `-asked`,
 *   `-completed`, `-done`. A state the caller must act on ends in `-required`.
 * - Fields are camelCase; ids are `…Id`; durations `…Ms`.
 * - `notice` and `error` are the two bare nouns: out-of-band information.
 * Consumers must switch exhaustively (see `assertNever`), so adding a type is a compile error
 * everywhere it is not handled yet.
 */
import { deepFreeze } from "./deep-freeze.js";
import type { TokenUsage } from "./messages.js";

export type PlanStepStatus = "pending" | "in_progress" | "done";
export interface PlanStep {
  readonly title: string;
  readonly status: PlanStepStatus;
}

export type ToolCallStatus = "ok" | "error" | "denied" | "interrupted" | "not_started";
export type TurnStatus = "completed" | "interrupted" | "max_iterations" | "error";
export type NoticeLevel = "info" | "warning" | "progress";
/** The "always" options that apply to one permission request. */
export type AlwaysOption = "always_tool" | "always_command" | "always_domain" | "readonly_session";
export type ToolCategory = "read" | "write" | "exec" | "network" | "interactive" | "messaging";

/** Where a permission request comes from: the user's own turn, or untrusted channel content. */
export interface Provenance {
  readonly kind: "user" | "channel_content";
  /** For channel content: which channel and a quote of the triggering text. */
  readonly channel?: string;
  readonly quote?: string;
  /** For channel content: the subscription whose content it is, when the request names it. */
  readonly subscriptionId?: string;
}

export interface QuestionSpec {
  readonly id: string;
  readonly question: string;
  readonly options: readonly string[];
}

export type AgentEvent =
  | { readonly type: "text-delta"; readonly delta: string }
  | { readonly type: "reasoning-delta"; readonly delta: string }
  | {
      readonly type: "assistant-message-done";
      readonly content: string;
      readonly step: number;
      /** How many tool calls the message makes: 0 means it is the model's answer, and the turn ends with it. */
      readonly toolCalls: number;
    }
  | { readonly type: "plan-updated"; readonly steps: readonly PlanStep[] }
  | {
      readonly type: "tool-call-started";
      readonly callId: string;
      readonly name: string;
      readonly args: Readonly<Record<string, unknown>>;
      readonly preview: string;
      /** What let an asking call run without a person's press ("allowed by reviewer: routine read"). */
      readonly clearedBy?: string;
    }
  | {
      readonly type: "tool-output-delta";
      readonly callId: string;
      readonly name: string;
      readonly delta: string;
    }
  | {
      readonly type: "tool-call-finished";
      readonly callId: string;
      readonly name: string;
      readonly status: ToolCallStatus;
      readonly outputPreview: string;
      readonly files: readonly string[];
      readonly durationMs: number;
      /** Why the call ended the way it did, in a few words ("exit 1", "timed out after 120 s", "not found"). */
      readonly reason?: string;
    }
  | {
      readonly type: "permission-required";
      readonly callId: string;
      readonly tool: string;
      readonly args: Readonly<Record<string, unknown>>;
      readonly reason: string;
      readonly category: ToolCategory;
      readonly provenance: Provenance;
      readonly alwaysOptions: readonly AlwaysOption[];
    }
  | { readonly type: "question-asked"; readonly callId: string; readonly questions: readonly QuestionSpec[] }
  | { readonly type: "notice"; readonly level: NoticeLevel; readonly message: string }
  | { readonly type: "compaction-started" }
  | { readonly type: "compaction-finished"; readonly removedMessages: number; readonly summaryChars: number }
  | {
      readonly type: "turn-completed";
      readonly status: TurnStatus;
      readonly iterations: number;
      readonly finalText: string;
      readonly usage: TokenUsage | undefined;
    }
  | { readonly type: "error"; readonly message: string; readonly recoverable: boolean };

export type AgentEventType = AgentEvent["type"];
export type EventOf<T extends AgentEventType> = Extract<AgentEvent, { type: T }>;

/** Build a frozen event: `agentEvent({ type: "text-delta", delta: "hi" })`. */
export function agentEvent<E extends AgentEvent>(event: E): E {
  return deepFreeze(event);
}

/** Compile-time exhaustiveness guard for switches over AgentEvent (or any union). */
export function assertNever(value: never): never {
  throw new Error(`unhandled variant: ${JSON.stringify(value)}`);
}
