/**
 * OpenAIProvider: the `ProviderClient` for any OpenAI-compatible chat-completions endpoint
 * (OpenAI, vLLM, Ollama, OpenRouter, llama.cpp …) on the `openai` SDK.
 *
 * One `stream()` call streams one assistant step. Retries (429, 5xx, connection failures, with
 * exponential backoff honouring Retry-After) happen here, not in the SDK, and only while the
 * model has produced no output — never after. A stall timer aborts a request that sends nothing
 * of its reply for `stallTimeoutMs`: only a chunk that moves the reply on restarts it (text,
 * reasoning, a tool-call fragment or a finish reason on choice 0 — see StreamAssembler), so a
 * server streaming empty or other-choice chunks cannot hold a turn open. A second timer, armed once
 * per attempt and never restarted, ends an attempt that goes on for longer than `maxStepMs` in
 * all: a server dripping a character just inside the stall timeout would otherwise hold the turn
 * (and its thread) for ever. Aborting `request.signal` aborts the HTTP request at once. A usage
 * report the endpoint gets wrong is left out of the step and logged once per provider.
 */
import { randomBytes } from "node:crypto";
import OpenAI from "openai";
import { backoffMs } from "../../core/backoff.js";
import { formatDuration } from "../../core/duration-text.js";
import type { ModelMessage } from "../../core/messages.js";
import type { Logger } from "../../logging/logger.js";
import { classifyFailure, errorNormalizingFetch, type FailureContext } from "./openai-errors.js";
import { StreamAssembler } from "./openai-stream-assembler.js";
import {
  type ProviderClient,
  ProviderError,
  type ProviderRequest,
  type ProviderStreamEvent,
} from "./provider.js";
import type { ToolSchema } from "../../core/tool.js";

export interface OpenAIProviderOptions {
  /** Defaults to https://api.openai.com/v1. The config is the only source: no environment is read. */
  readonly baseURL?: string;
  /** Absent or empty: a placeholder is sent (local servers need no key). */
  readonly apiKey?: string;
  /** Abort a request when no part of the reply arrives for this long (default 60 s). */
  readonly stallTimeoutMs?: number;
  /** Abort a request still streaming after this long in all, however steadily (default 30 min). */
  readonly maxStepMs?: number;
  /** Retries before any output streamed (default 3). */
  readonly maxRetries?: number;
  readonly fetch?: typeof fetch;
  /** Clock for Retry-After dates (default Date.now). */
  readonly now?: () => number;
  /** Backoff wait; must reject or return promptly when `signal` aborts (default: a timer). */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Where an unusable usage report is logged (once). */
  readonly logger?: Pick<Logger, "warn">;
}

type ChatParams = OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming;
type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

const DEFAULT_BASE_URL = "https://api.openai.com/v1";
const BACKOFF_BASE_MS = 500;
const BACKOFF_MAX_MS = 8_000;
/** Longest Retry-After we honour; a server asking for more is waited on for this long. */
export const RETRY_AFTER_CAP_MS = 30_000;

/** Streams chat completions from an OpenAI-compatible endpoint. */
export class OpenAIProvider implements ProviderClient {
  private readonly client: OpenAI;
  private readonly baseURL: string;
  private readonly stallTimeoutMs: number;
  private readonly maxStepMs: number;
  private readonly maxRetries: number;
  private readonly now: () => number;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly logger: Pick<Logger, "warn"> | undefined;
  private usageProblemLogged = false;

  constructor(options: OpenAIProviderOptions = {}) {
    this.baseURL = (options.baseURL ?? DEFAULT_BASE_URL).replace(/\/+$/, "");
    this.stallTimeoutMs = options.stallTimeoutMs ?? 60_000;
    this.maxStepMs = options.maxStepMs ?? 30 * 60_000;
    this.logger = options.logger;
    this.maxRetries = options.maxRetries ?? 3;
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? abortableSleep;
    // The key comes from the configuration, whose secrets are registered with the redactor at start
    // (config/config-secrets.ts registerConfigSecrets): a message or log line echoing it shows
    // `[redacted]`, whatever its shape.
    const baseFetch = options.fetch;
    this.client = new OpenAI({
      baseURL: this.baseURL,
      // `||`, not `??`: an empty key must never reach the SDK, which rejects it as missing.
      apiKey: options.apiKey || "no-key",
      maxRetries: 0,
      // Every failure surfaces as a ProviderError (with the SDK error as cause); no console noise.
      logLevel: "off",
      fetch: errorNormalizingFetch(() => baseFetch ?? globalThis.fetch),
    });
  }

  /** Stream one assistant step; see the module header for retry, stall and abort rules. */
  async *stream(request: ProviderRequest): AsyncIterable<ProviderStreamEvent> {
    const body = requestBody(request);
    const ctx: FailureContext = {
      model: request.model,
      baseURL: this.baseURL,
      now: this.now,
    };
    const progress = { outputBegan: false };
    for (let attempt = 0; ; attempt++) {
      if (request.signal?.aborted) throw abortedError();
      try {
        yield* this.attempt(body, request.signal, progress);
        return;
      } catch (error) {
        const failure = classifyFailure(error, ctx);
        if (progress.outputBegan || !failure.retryable || attempt >= this.maxRetries) throw failure.error;
        const backoff = backoffMs(attempt, BACKOFF_BASE_MS, BACKOFF_MAX_MS);
        const wait =
          failure.retryAfterMs === undefined ? backoff : Math.min(failure.retryAfterMs, RETRY_AFTER_CAP_MS);
        await this.sleep(wait, request.signal).catch(() => undefined);
      }
    }
  }

  private async *attempt(
    body: ChatParams,
    signal: AbortSignal | undefined,
    progress: { outputBegan: boolean },
  ): AsyncGenerator<ProviderStreamEvent> {
    const controller = new AbortController();
    let stalled = false;
    let overran = false;
    const limit = setTimeout(() => {
      overran = true;
      controller.abort();
    }, this.maxStepMs);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const arm = (): void => {
      timer = setTimeout(() => {
        stalled = true;
        controller.abort();
      }, this.stallTimeoutMs);
    };
    const disarm = (): void => clearTimeout(timer);
    const onAbort = (): void => controller.abort();
    signal?.addEventListener("abort", onAbort, { once: true });
    const assembler = new StreamAssembler(toolCallIdMaker(), (problem) => this.usageProblem(problem));
    const interruption = (): ProviderError | undefined => {
      if (signal?.aborted) return abortedError();
      if (stalled) return stalledError(this.stallTimeoutMs);
      if (overran) return overranError(this.maxStepMs);
      return undefined;
    };
    try {
      arm();
      const stream = await this.client.chat.completions.create(body, { signal: controller.signal });
      const chunks = stream[Symbol.asyncIterator]();
      for (;;) {
        const next = await chunks.next();
        if (next.done) break;
        const events = assembler.push(next.value);
        // A chunk that carries nothing of the reply leaves the timer running.
        if (!assembler.advanced) continue;
        disarm();
        progress.outputBegan ||= assembler.outputBegan;
        yield* events;
        arm();
      }
      disarm();
      // The SDK ends the iteration quietly on abort; a reply that already has its finish reason
      // is complete anyway, and one without it fails here and is reported as the interruption.
      yield assembler.finish();
    } catch (error) {
      throw interruption() ?? error;
    } finally {
      disarm();
      clearTimeout(limit);
      signal?.removeEventListener("abort", onAbort);
      controller.abort();
    }
  }

  /** Log, the first time only, why an endpoint's usage report was left out. */
  private usageProblem(problem: string): void {
    if (this.usageProblemLogged) return;
    this.usageProblemLogged = true;
    this.logger?.warn(
      { baseURL: this.baseURL, problem },
      "The model endpoint sent a usage report that cannot be read; steps with one have no token counts (logged once).",
    );
  }
}

/** The streaming request body for one step. */
function requestBody(request: ProviderRequest): ChatParams {
  return {
    model: request.model,
    messages: request.messages.map(toWireMessage),
    stream: true,
    stream_options: { include_usage: true },
    ...(request.tools.length > 0 ? { tools: request.tools.map(toWireTool) } : {}),
    ...(request.maxOutputTokens !== undefined ? { max_tokens: request.maxOutputTokens } : {}),
  };
}

function toWireMessage(message: ModelMessage): ChatMessage {
  switch (message.role) {
    case "system":
      return { role: "system", content: message.content };
    case "user":
      return {
        role: "user",
        content:
          typeof message.content === "string"
            ? message.content
            : message.content.map((part) =>
                part.type === "text"
                  ? { type: "text", text: part.text }
                  : {
                      type: "image_url",
                      image_url: { url: part.image_url.url, detail: part.image_url.detail },
                    },
              ),
      };
    case "tool":
      return { role: "tool", tool_call_id: message.tool_call_id, content: message.content };
    case "assistant":
      return message.tool_calls && message.tool_calls.length > 0
        ? {
            role: "assistant",
            content: message.content,
            tool_calls: message.tool_calls.map((c) => ({
              id: c.id,
              type: "function",
              function: { name: c.function.name, arguments: c.function.arguments },
            })),
          }
        : { role: "assistant", content: message.content ?? "" };
  }
}

function toWireTool(tool: ToolSchema): OpenAI.Chat.Completions.ChatCompletionFunctionTool {
  return {
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: { ...tool.parameters } },
  };
}

/** Ids for tool calls a server sent without one: unique per step, stable per call. */
function toolCallIdMaker(): (position: number) => string {
  const step = randomBytes(6).toString("hex");
  return (position) => `call_${step}_${position}`;
}

function abortedError(): ProviderError {
  return new ProviderError("aborted", "The model request was cancelled.");
}

function stalledError(stallTimeoutMs: number): ProviderError {
  const span = stallTimeoutMs < 1_000 ? `${stallTimeoutMs} ms` : `${Math.round(stallTimeoutMs / 1_000)} s`;
  return new ProviderError(
    "stalled",
    `The model sent nothing of its reply for ${span}, so the request was cancelled.`,
  );
}

function overranError(maxStepMs: number): ProviderError {
  return new ProviderError(
    "timeout",
    `The model kept streaming for over ${formatDuration(maxStepMs)}, so the request was stopped.`,
  );
}

/** The default backoff wait: a timer that ends early (resolving) when `signal` aborts. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}
