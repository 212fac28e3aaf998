/**
 * The lenient zod shape of one streamed `chat.completion.chunk` from an OpenAI-compatible server.
 *
 * Only the fields the provider reads are checked; unknown fields pass through, and optional
 * fields may be absent or null (servers differ). A chunk that breaks the shape is reported as a
 * `ProviderError` naming the offending field, never a crash deeper down.
 */
import { z } from "zod";
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

const deltaSchema = z.looseObject({
  content: z.string().nullish(),
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

const usageSchema = z.looseObject({
  prompt_tokens: z.number().nonnegative(),
  completion_tokens: z.number().nonnegative(),
  total_tokens: z.number().nonnegative().nullish(),
});

const chunkSchema = z.looseObject({
  object: z.string().nullish(),
  message: z.unknown().optional(),
  choices: z.array(choiceSchema).nullish(),
  usage: usageSchema.nullish(),
});

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
