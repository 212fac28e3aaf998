/**
 * The lenient zod shape of one streamed `chat.completion.chunk` from an OpenAI-compatible server.
 *
 * Only the fields the provider reads are checked; unknown fields pass through, and optional
 * fields may be absent or null (servers differ); `delta.content` may be text or an array of typed
 * parts (text, thinking). A chunk that breaks the shape is reported as a
 * `ProviderError` naming the offending field, never a crash deeper down. The token usage report is
 * read on its own (readUsage): a bad one (a negative count, a count missing, as some proxies send)
 * only loses the step's token counts, never the reply it comes after.
 */
import { z } from "zod";
import type { TokenUsage } from "../../core/messages.js";
import { ProviderError } from "./provider.js";

const toolCallFragmentSchema = z.looseObject({
  index: z.number().int().nonnegative().nullish(),
  id: z.string().nullish(),
  type: z.string().nullish(),
  function: z
    .looseObject({
      name: z.string().nullish(),
      // Some servers send arguments as an already-parsed object instead of JSON text.
      arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).nullish(),
    })
    .nullish(),
});

/** The text of a part: a string, or (Mistral's thinking parts) a list of text parts. */
const partTextSchema = z.union([
  z.string(),
  z.array(z.looseObject({ type: z.string().nullish(), text: z.string().nullish() })),
]);

/**
 * One typed part of an array `content` (Mistral and other servers): `text` parts carry the answer,
 * `thinking` / `reasoning` parts the model's reasoning; parts of other types (references, images)
 * carry nothing the provider can show and are skipped.
 */
const contentPartSchema = z.looseObject({
  type: z.string(),
  text: partTextSchema.nullish(),
  thinking: partTextSchema.nullish(),
  reasoning: partTextSchema.nullish(),
});

const deltaSchema = z.looseObject({
  content: z.union([z.string(), z.array(contentPartSchema)]).nullish(),
  /** vLLM, DeepSeek and some Ollama builds. */
  reasoning_content: z.string().nullish(),
  /** OpenRouter, newer vLLM and Ollama. */
  reasoning: z.string().nullish(),
  tool_calls: z.array(toolCallFragmentSchema).nullish(),
});

const choiceSchema = z.looseObject({
  index: z.number().int().nullish(),
  delta: deltaSchema.nullish(),
  finish_reason: z.string().nullish(),
});

/** A token count: a whole number of at most 2^53 - 1, so the session's running totals stay finite (and storable). */
const tokenCount = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

const usageSchema = z.looseObject({
  prompt_tokens: tokenCount,
  completion_tokens: tokenCount,
  total_tokens: tokenCount.nullish(),
});

const chunkSchema = z.looseObject({
  object: z.string().nullish(),
  message: z.unknown().optional(),
  choices: z.array(choiceSchema).nullish(),
  /** Checked apart from the chunk, by readUsage. */
  usage: z.unknown().optional(),
});

export type ContentPart = z.infer<typeof contentPartSchema>;
export type ToolCallFragment = z.infer<typeof toolCallFragmentSchema>;
export type StreamChunk = z.infer<typeof chunkSchema>;

/** Validate one parsed SSE payload; a shape violation becomes a ProviderError naming the field. */
export function parseChunk(raw: unknown): StreamChunk {
  const result = chunkSchema.safeParse(raw);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue && issue.path.length > 0 ? issue.path.join(".") : "chunk";
  const what = issue?.message ?? "invalid shape";
  throw new ProviderError("server", `The model endpoint sent a malformed stream chunk (${where}: ${what}).`);
}

/** What a chunk's usage report gives: the step's token counts, or why they cannot be used. */
export type UsageReading =
  | { readonly kind: "usage"; readonly usage: TokenUsage }
  | { readonly kind: "invalid"; readonly problem: string };

/** Read a chunk's (present, non-null) usage report. */
export function readUsage(raw: unknown): UsageReading {
  const result = usageSchema.safeParse(raw);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue && issue.path.length > 0 ? `usage.${issue.path.join(".")}` : "usage";
    return { kind: "invalid", problem: `${where}: ${issue?.message ?? "invalid shape"}` };
  }
  const usage = result.data;
  return {
    kind: "usage",
    usage: Object.freeze({
      inputTokens: usage.prompt_tokens,
      outputTokens: usage.completion_tokens,
      totalTokens: usage.total_tokens ?? usage.prompt_tokens + usage.completion_tokens,
    }),
  };
}

function joinPartText(value: z.infer<typeof partTextSchema> | null | undefined): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  return value
    .map((part) => (part.type === undefined || part.type === "text" ? (part.text ?? "") : ""))
    .join("");
}

/** A delta's answer text and reasoning text, from string content or an array of typed parts. */
export function deltaTexts(content: string | readonly ContentPart[] | null | undefined): {
  readonly text: string;
  readonly reasoning: string;
} {
  if (content === null || content === undefined) return { text: "", reasoning: "" };
  if (typeof content === "string") return { text: content, reasoning: "" };
  let text = "";
  let reasoning = "";
  for (const part of content) {
    if (part.type === "text") text += joinPartText(part.text);
    else if (part.type === "thinking" || part.type === "reasoning")
      reasoning += joinPartText(part.thinking ?? part.reasoning ?? part.text);
  }
  return { text, reasoning };
}
