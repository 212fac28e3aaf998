/**
 * Conversation messages: the OpenAI-compatible chat history the engine keeps for a session.
 *
 * A message may carry display-only fields under `meta` (timestamps, source sidecars, usage,
 * notices). They are persisted with the history but stripped by `toModelMessage` before anything
 * is sent to a model. Reasoning is never stored as content.
 *
 * A user message (a person's files) or a tool result (read_file on an image) may carry
 * `attachments`: records naming workspace files, never their bytes. They are adapted to the
 * model of each call at send time (see outbound-media.ts); the stored message never changes.
 */
import type { Attachment } from "./attachment.js";
import type { PermissionMode } from "./modes.js";

/**
 * The most characters one reply may stream: its text, reasoning and tool calls together (a
 * provider cuts a reply off there). No tool call is longer.
 */
export const MAX_REPLY_CHARS = 2_000_000;

/** One tool call the assistant made, as the OpenAI wire format spells it. */
export interface ToolCallRecord {
  readonly id: string;
  readonly type: "function";
  readonly function: { readonly name: string; readonly arguments: string };
}

/** Display-only sidecar fields: never sent to the model. */
export interface MessageMeta {
  readonly at?: string;
  readonly source?: string;
  readonly usage?: TokenUsage;
  readonly notice?: string;
  /** Set on an assistant message that ended in a provider error (enables `retry()`). */
  readonly error?: string;
  /** Set on a user message that carries untrusted channel content (a subscription wake-up). */
  readonly untrusted?: boolean;
  /** Set on a user message that is the agent's own note (a wake-up, a task no person approved: agent-note.ts). */
  readonly agentNote?: boolean;
  /**
   * On a user message a person wrote: their user id (the turn's requester; steering is taken
   * only from them). Absent on older histories and on channel content and notes.
   */
  readonly by?: string;
  /**
   * On an assistant message whose step asked for more tool calls than a step may make: how many
   * were dropped (never stored, never run) after the ones it holds.
   */
  readonly droppedToolCalls?: number;
  /**
   * On an assistant message: the mode its step's calls were proposed in. A resumed turn decides the
   * calls still waiting in the stricter of it and the session's mode now (tool-scheduler.ts).
   * Absent on older histories.
   */
  readonly stepMode?: PermissionMode;
  readonly [key: string]: unknown;
}

export type ConversationMessage =
  | { readonly role: "system"; readonly content: string; readonly meta?: MessageMeta }
  | {
      readonly role: "user";
      readonly content: string;
      readonly attachments?: readonly Attachment[];
      readonly meta?: MessageMeta;
    }
  | {
      readonly role: "assistant";
      readonly content: string | null;
      readonly tool_calls?: readonly ToolCallRecord[];
      readonly meta?: MessageMeta;
    }
  | {
      readonly role: "tool";
      readonly tool_call_id: string;
      readonly content: string;
      readonly attachments?: readonly Attachment[];
      readonly meta?: MessageMeta;
    };

/** One part of a multi-part user message, as OpenAI-compatible servers spell it. */
export type ContentPart =
  | { type: "text"; text: string }
  | { type: "image_url"; image_url: { url: string; detail: "auto" | "low" | "high" } };

/** The shape sent to a model: the same roles with every display-only field removed. */
export type ModelMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string | ContentPart[] }
  | { role: "assistant"; content: string | null; tool_calls?: ToolCallRecord[] }
  | { role: "tool"; tool_call_id: string; content: string };

export interface TokenUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly totalTokens: number;
}

/** Strip display-only fields so only what the model understands goes on the wire. */
export function toModelMessage(message: ConversationMessage): ModelMessage {
  switch (message.role) {
    case "system":
    case "user":
      return { role: message.role, content: message.content };
    case "assistant":
      return message.tool_calls && message.tool_calls.length > 0
        ? {
            role: "assistant",
            content: message.content,
            tool_calls: message.tool_calls.map((c) => ({ ...c })),
          }
        : { role: "assistant", content: message.content ?? "" };
    case "tool":
      return { role: "tool", tool_call_id: message.tool_call_id, content: message.content };
  }
}

/** Sum two usage records (either may be absent). */
export function addUsage(a: TokenUsage | undefined, b: TokenUsage | undefined): TokenUsage | undefined {
  if (!a) return b;
  if (!b) return a;
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  };
}

/** Why the model ended a step. */
export type FinishReason = "stop" | "tool_calls" | "length" | "content_filter";

/**
 * Whether someone other than `requester` (a platform user id) wrote the message: in a shared
 * thread the history holds other people's turns. Messages from before authors were recorded count
 * as the requester's.
 */
export function writtenByOther(message: ConversationMessage, requester: string): boolean {
  const by = message.meta?.by;
  return typeof by === "string" && by !== requester;
}
