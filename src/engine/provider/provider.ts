/**
 * ProviderClient: the engine's view of a chat model. One call streams one assistant step.
 *
 * Implementations turn their wire format into `ProviderStreamEvent`s: text and reasoning deltas
 * as they arrive, then exactly one `step-finished` with the assembled message. Failures are
 * thrown as `ProviderError` with a short friendly message; context overflow has its own kind so
 * the engine can compact and retry.
 */
import type { FinishReason, ModelMessage, TokenUsage } from "../../core/messages.js";
import type { ToolSchema } from "../../core/tool.js";

export interface ProviderRequest {
  readonly model: string;
  readonly messages: readonly ModelMessage[];
  readonly tools: readonly ToolSchema[];
  readonly signal?: AbortSignal;
  readonly maxOutputTokens?: number;
}

/** A tool call as the model sent it: arguments still raw text, parsed by the engine. */
export interface RawToolCall {
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
}

export type ProviderStreamEvent =
  | { readonly type: "text-delta"; readonly delta: string }
  | { readonly type: "reasoning-delta"; readonly delta: string }
  | {
      readonly type: "step-finished";
      readonly text: string;
      readonly toolCalls: readonly RawToolCall[];
      readonly finishReason: FinishReason;
      readonly usage: TokenUsage | undefined;
    };

export interface ProviderClient {
  /** Stream one assistant step. Aborting `request.signal` must stop the server generating. */
  stream(request: ProviderRequest): AsyncIterable<ProviderStreamEvent>;
}

export type ProviderErrorKind =
  | "rate_limited"
  | "server"
  | "connection"
  | "timeout"
  | "stalled"
  | "incomplete"
  | "context_overflow"
  | "auth"
  | "bad_request"
  | "aborted";

/** A model failure with a short text fit to show a person. */
export class ProviderError extends Error {
  override readonly name = "ProviderError";
  constructor(
    readonly kind: ProviderErrorKind,
    message: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** Whether a later retry could plausibly succeed. */
  get recoverable(): boolean {
    return this.kind !== "auth" && this.kind !== "bad_request";
  }
}

/** The context window was exceeded: compact the history and try again. */
export class ContextOverflowError extends ProviderError {
  constructor(
    message = "The conversation is too long for the model's context window.",
    options?: { cause?: unknown },
  ) {
    super("context_overflow", message, 400, options);
  }
}
