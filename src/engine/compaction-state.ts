/**
 * A session's compaction state as it outlives one engine: the summary and the boundary it stands
 * for. An engine lives only while its session is in memory — a restart, an eviction from the
 * session cache, a rebuild after a stop or a lease takeover makes a new one — and without the
 * state the new engine would send the whole history again, overflow, and summarise it anew
 * without the earlier summary, losing the early turns on each rebuild. The engine never touches
 * the store: it is given a CompactionStatePort, loads the state before its first turn, and saves
 * it when a compaction completes. The state applies only to the history it was built on (its
 * anchor, compaction.ts), so a stale or foreign one is ignored, never misapplied.
 */
import { z } from "zod";

/** The compaction state's stored shape. */
export const compactionStateSchema = z
  .object({
    /** How many leading history messages the summary stands for. */
    covered: z.number().int().positive(),
    /** The last covered message, serialised: the state applies only to the history it was built on. */
    anchor: z.string(),
    summary: z.string(),
    /** Whether some of the covered turns were left out of the summary. */
    trimmed: z.boolean(),
  })
  .strict()
  .readonly();

export type CompactionState = z.infer<typeof compactionStateSchema>;

/**
 * Where one session's compaction state is kept between engines. Neither call rejects: a state
 * that cannot be read loads as undefined (the session compacts from the start again) and a save
 * that fails leaves the older state; the port reports such failures itself.
 */
export interface CompactionStatePort {
  load(): Promise<CompactionState | undefined>;
  save(state: CompactionState): Promise<void>;
}
