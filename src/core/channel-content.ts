/**
 * Channel content: what a turn woken by a watched channel's messages carries in its request
 * (`metadata.channelContent`) and its session record — the channel's display label, a short quote
 * of the trigger, and the subscription whose content it is. One schema for the three places that
 * read it: the session record, the permission engine's provenance, and a woken turn's catch_up.
 */
import { z } from "zod";

/**
 * Where a woken turn's input came from. `subscriptionId` is absent in requests stored before it
 * was kept, and in a retry's provenance recovered from the history alone.
 */
export interface ChannelContent {
  readonly channel: string;
  readonly quote: string;
  readonly subscriptionId?: string;
}

/** A subscription id as channel content carries it (`sub_` and 12 hex digits today; room to spare). */
export const subscriptionIdSchema = z.string().min(1).max(40);

/** Validates stored or requested channel content. */
export const channelContentSchema = z.object({
  channel: z.string(),
  quote: z.string(),
  subscriptionId: subscriptionIdSchema.optional(),
});
