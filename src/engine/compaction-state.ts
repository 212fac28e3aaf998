/**
 * A session's compaction state as it outlives one engine: the summary and the boundary it stands
 * for. An engine lives only while its session is in memory — a restart, an eviction from the
 * session cache, a rebuild after a stop or a lease takeover makes a new one — and without the
 * state the new engine would send the whole history again, overflow, and summarise it anew
 * without the earlier summary, losing the early turns on each rebuild. The engine never touches
 * the store: it is given a CompactionStatePort, loads the state before its first turn, and saves
 * it when a compaction completes. The state applies only to the history it was built on: its
 * anchor is the hash of the last covered message in canonical form (keys sorted at every level),
 * so the same message read back from the store, whose keys come in the schema's order, still
 * matches, and a stale or foreign state is ignored, never misapplied. A state saved with the
 * anchor message whole (the first shape) is read as its hash.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { canonicalJson } from "./call-identity.js";

/** The anchor of a state covering up to `message`: sha256 (hex) of its canonical JSON. */
export function anchorHash(message: unknown): string {
  return createHash("sha256").update(canonicalJson(message)).digest("hex");
}

const stateFields = {
  /** How many leading history messages the summary stands for. */
  covered: z.number().int().positive(),
  summary: z.string(),
  /** Whether some of the covered turns were left out of the summary. */
  trimmed: z.boolean(),
};

/** The shape saved now: the last covered message by its anchor hash. */
const hashedStateSchema = z
  .object({ ...stateFields, anchorHash: z.string().regex(/^[0-9a-f]{64}$/) })
  .strict();

/** The shape first saved: the last covered message whole, as JSON; read as its anchor hash. */
const wholeAnchorStateSchema = z
  .object({ ...stateFields, anchor: z.string() })
  .strict()
  .transform(({ anchor, ...rest }, ctx) => {
    try {
      return { ...rest, anchorHash: anchorHash(JSON.parse(anchor)) };
    } catch {
      ctx.addIssue({ code: "custom", message: "anchor is not JSON", path: ["anchor"] });
      return z.NEVER;
    }
  });

export type CompactionState = Readonly<z.output<typeof hashedStateSchema>>;

/** The compaction state's stored shape (either), read as the current one. */
export const compactionStateSchema: z.ZodType<CompactionState> = z
  .union([hashedStateSchema, wholeAnchorStateSchema])
  .readonly();

/**
 * Where one session's compaction state is kept between engines, and where what went wrong in its
 * compactions is reported for the operator. Neither load nor save rejects: a state that cannot be
 * read loads as undefined (the session compacts from the start again) and a save that fails
 * leaves the older state; the port reports such failures itself.
 */
export interface CompactionStatePort {
  load(): Promise<CompactionState | undefined>;
  save(state: CompactionState): Promise<void>;
  /** A loaded state was not used: it was built on another history (`reason` says how it differs). */
  notUsed(reason: string): void;
  /** A summary call failed with `error`; `outcome` says what the compaction did instead. */
  summaryFailed(error: unknown, outcome: string): void;
}
