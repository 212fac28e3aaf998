/**
 * The reviewer's verdict: the JSON it must answer with (`{"verdict": …, "reason": …}`), the JSON
 * Schema sent as `response_format` where the endpoint supports it, and a strict parser. The answer
 * must BE the verdict object — the whole text, or one code fence holding it with nothing but
 * whitespace around — with exactly those two keys, each once. JSON inside prose is never read:
 * the reviewer reads arguments the agent (perhaps prompt-injected) wrote, and a denial that quotes
 * an "allow" example, a fenced "allow" after "Verdict: deny", an extra key or a repeated key are
 * not verdicts. Anything that does not parse is not a verdict: the caller counts it as "unsure",
 * so a confused reviewer always falls back to a person.
 */
import { z } from "zod";
import { clip } from "../../core/surrogate-pairs.js";

export const VERDICTS = ["allow", "deny", "unsure"] as const;
export type VerdictKind = (typeof VERDICTS)[number];

/** How the reviewer's call went when it produced no real verdict. */
export type ReviewFailure = "unparsable" | "timeout" | "error";

/** One verdict with its cost; `failure` set when it is an "unsure" made up for a failed call. */
export interface ReviewerVerdict {
  readonly verdict: VerdictKind;
  readonly reason: string;
  readonly tokensIn: number;
  readonly tokensOut: number;
  readonly latencyMs: number;
  readonly failure?: ReviewFailure;
}

const REASON_MAX_CHARS = 600;

/** Exactly `verdict` and `reason`: any other key (a "final_verdict", say) makes it no verdict. */
const verdictSchema = z.strictObject({
  verdict: z
    .string()
    .transform((v) => v.trim().toLowerCase())
    .pipe(z.enum(VERDICTS)),
  reason: z
    .string()
    .trim()
    .min(1)
    .transform((r) => clip(r, REASON_MAX_CHARS)),
});

/** The `response_format` JSON Schema for endpoints with structured outputs. */
export const VERDICT_JSON_SCHEMA = Object.freeze({
  name: "reviewer_verdict",
  strict: true,
  schema: {
    type: "object",
    properties: {
      verdict: { type: "string", enum: [...VERDICTS] },
      reason: { type: "string" },
    },
    required: ["verdict", "reason"],
    additionalProperties: false,
  },
});

/** One fenced block that is the whole answer (the text is trimmed first). */
const WHOLLY_FENCED = /^```(?:json)?[ \t]*(?:\r?\n)?([\s\S]*?)```$/i;

/** The JSON text the answer consists of: the whole trimmed text, or the one fence it is. */
function answerJson(text: string): string {
  const trimmed = text.trim();
  const fenced = WHOLLY_FENCED.exec(trimmed);
  if (!fenced) return trimmed;
  const inner = fenced[1] ?? "";
  // A second fence inside means two blocks (or prose between them): not one answer.
  return inner.includes("```") ? "" : inner.trim();
}

/** A JSON string token. */
const JSON_STRING = /"(?:[^"\\]|\\.)*"/g;

/**
 * Whether `json` (already valid JSON, and a verdict by the schema: one object of two string
 * fields) holds more than those four strings, two keys and their values: a key named twice adds
 * at least one. JSON.parse keeps the last, so `{"verdict":"deny",…,"verdict":"allow"}` would
 * otherwise read as allow, escaped spellings of a key included.
 */
function repeatsAKey(json: string): boolean {
  return [...json.matchAll(JSON_STRING)].length !== 4;
}

/**
 * The verdict a model's answer is: the bare JSON object, or one fenced block holding it, with
 * whitespace around at most; undefined for anything else (prose around it, several objects or
 * fences, extra or repeated keys, a bad value).
 */
export function parseVerdict(text: string): { verdict: VerdictKind; reason: string } | undefined {
  const candidate = answerJson(text);
  let json: unknown;
  try {
    json = JSON.parse(candidate);
  } catch {
    return undefined;
  }
  const parsed = verdictSchema.safeParse(json);
  return parsed.success && !repeatsAKey(candidate) ? parsed.data : undefined;
}
