/**
 * ReviewerModel: the reviewer's one non-streaming chat-completions request, and its implementation
 * for any OpenAI-compatible endpoint. The request carries no `tools` (the reviewer can only answer),
 * asks for the verdict JSON through `response_format: json_schema`, and — when an endpoint rejects
 * that parameter with a 400 — asks again once without it and leaves it out from then on (Ollama
 * and older vLLM builds; the prompt already demands JSON). Errors are thrown; the Reviewer turns
 * them into "unsure".
 */
import OpenAI, { APIError } from "openai";
import type { ReviewerMessage } from "./review-input.js";
import { VERDICT_JSON_SCHEMA } from "./verdict.js";

export interface ReviewerCompletion {
  readonly text: string;
  readonly tokensIn: number;
  readonly tokensOut: number;
}

/** The reviewer's model call; must stop at once when `signal` aborts. */
export interface ReviewerModel {
  complete(messages: readonly ReviewerMessage[], signal: AbortSignal): Promise<ReviewerCompletion>;
}

export interface OpenAIReviewerModelOptions {
  readonly model: string;
  /** Defaults to OPENAI_BASE_URL, then https://api.openai.com/v1. */
  readonly baseURL?: string;
  readonly apiKey?: string;
  /** Cap on the verdict's length in tokens (default 200). */
  readonly maxOutputTokens?: number;
  readonly fetch?: typeof fetch;
}

const RESPONSE_FORMAT_REFUSED = /response_format|json_schema|structured output/i;

/** The reviewer on an OpenAI-compatible chat-completions endpoint. */
export class OpenAIReviewerModel implements ReviewerModel {
  private readonly client: OpenAI;
  private structured = true;

  constructor(private readonly options: OpenAIReviewerModelOptions) {
    // No registerSecret here: the key is the configuration's (app/conversation-assembly.ts's
    // reviewerEndpoint), registered with the redactor at start (config/config-secrets.ts). Nothing
    // is read from the environment here: a reviewer on another host must not get the main key.
    this.client = new OpenAI({
      baseURL: (options.baseURL ?? "https://api.openai.com/v1").replace(/\/+$/, ""),
      apiKey: options.apiKey ?? "no-key",
      maxRetries: 0,
      logLevel: "off",
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
  }

  async complete(messages: readonly ReviewerMessage[], signal: AbortSignal): Promise<ReviewerCompletion> {
    try {
      return await this.request(messages, signal, this.structured);
    } catch (error) {
      const refused =
        this.structured &&
        error instanceof APIError &&
        error.status === 400 &&
        RESPONSE_FORMAT_REFUSED.test(error.message);
      if (!refused) throw error;
      this.structured = false;
      return this.request(messages, signal, false);
    }
  }

  private async request(
    messages: readonly ReviewerMessage[],
    signal: AbortSignal,
    structured: boolean,
  ): Promise<ReviewerCompletion> {
    const reply = await this.client.chat.completions.create(
      {
        model: this.options.model,
        messages: messages.map((m) => ({ role: m.role, content: m.content })),
        stream: false,
        temperature: 0,
        max_tokens: this.options.maxOutputTokens ?? 200,
        ...(structured
          ? { response_format: { type: "json_schema" as const, json_schema: { ...VERDICT_JSON_SCHEMA } } }
          : {}),
      },
      { signal },
    );
    return {
      text: reply.choices[0]?.message?.content ?? "",
      tokensIn: reply.usage?.prompt_tokens ?? 0,
      tokensOut: reply.usage?.completion_tokens ?? 0,
    };
  }
}
