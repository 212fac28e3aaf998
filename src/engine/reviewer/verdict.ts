/**
 * The reviewer's verdict: the JSON it must answer with (`{"verdict": …, "reason": …}`), the JSON
 * Schema sent as `response_format` where the endpoint supports it, and a tolerant parser — models
 * wrap JSON in code fences or add a sentence around it. Anything that does not parse is not a
 * verdict: the caller counts it as "unsure", so a confused reviewer always falls back to a person.
 */
import { z } from "zod";

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

const verdictSchema = z.object({
  verdict: z
    .string()
    .transform((v) => v.trim().toLowerCase())
    .pipe(z.enum(VERDICTS)),
  reason: z
    .string()
    .trim()
    .min(1)
    .transform((r) => (r.length <= REASON_MAX_CHARS ? r : `${r.slice(0, REASON_MAX_CHARS - 1)}…`)),
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

const FENCED = /```(?:json)?\s*([\s\S]*?)```/i;

function candidates(text: string): string[] {
  const out = [text.trim()];
  const fenced = FENCED.exec(text);
  if (fenced?.[1]) out.push(fenced[1].trim());
  const first = text.indexOf("{");
  const last = text.lastIndexOf("}");
  if (first >= 0 && last > first) out.push(text.slice(first, last + 1));
  return out;
}

/** The verdict in a model's answer (bare JSON, fenced, or JSON inside prose); undefined if none. */
export function parseVerdict(text: string): { verdict: VerdictKind; reason: string } | undefined {
  for (const candidate of candidates(text)) {
    let json: unknown;
    try {
      json = JSON.parse(candidate);
    } catch {
      continue;
    }
    const parsed = verdictSchema.safeParse(json);
    if (parsed.success) return parsed.data;
  }
  return undefined;
}
