/**
 * Buffer entries and positions: one message the bot saw in a watched channel, as the channel
 * buffer stores it, and a point in a channel's buffer ("read up to here") that survives the buffer
 * being dropped and rebuilt.
 */
import { z } from "zod";
import { clipWithMarker } from "../core/surrogate-pairs.js";

export interface BufferAuthor {
  readonly id: string;
  readonly name: string;
  readonly isBot: boolean;
}

/** A message as handed to the buffer. */
export interface BufferEntryInput {
  /** Platform message id: Slack ts, Telegram message_id. */
  readonly id: string;
  readonly author: BufferAuthor;
  /** ISO time the platform says it was sent. */
  readonly at: string;
  readonly text: string;
  /** Slack thread_ts / Telegram forum topic id, when the message is inside one. */
  readonly thread?: string;
  readonly permalink?: string;
  /** The message mentions the bot (kept so mention triggers can be re-run after a restart). */
  readonly mentionsBot?: boolean;
}

/**
 * A stored message: the input plus its sequence number in the channel's buffer (1, 2, 3, …) and
 * when it was buffered (which may be long after it was sent: a late delivery, a backfill).
 */
export interface BufferEntry extends BufferEntryInput {
  readonly seq: number;
  /** ISO time it was buffered; absent on entries buffered before this was recorded. */
  readonly bufferedAt?: string;
}

/**
 * A point in a channel's buffer. `epoch` names one incarnation of the buffer: within it `seq`
 * orders entries exactly; across incarnations (the buffer was dropped and rebuilt, or the entries
 * came from a history backfill with epoch "") only the time `at` is compared.
 */
export interface BufferPosition {
  readonly epoch: string;
  readonly seq: number;
  readonly at: string;
}

/** Longest message text kept per entry; longer texts are cut with a marker. */
export const DEFAULT_MAX_ENTRY_CHARS = 4_000;

const shortText = z.string().min(1).max(200);

/** Validates a message author. */
export const bufferAuthorSchema: z.ZodType<BufferAuthor> = z.object({
  id: shortText,
  name: z.string().max(200),
  isBot: z.boolean(),
});

const entryInputObject = z.object({
  id: shortText,
  author: bufferAuthorSchema,
  at: z.iso.datetime({ offset: true }),
  text: z.string(),
  thread: shortText.optional(),
  permalink: z.string().max(2_000).optional(),
  mentionsBot: z.boolean().optional(),
});

/** Validates a message handed to the buffer. */
export const bufferEntryInputSchema: z.ZodType<BufferEntryInput> = entryInputObject;

/** Validates a stored buffer entry. */
export const bufferEntrySchema: z.ZodType<BufferEntry> = entryInputObject.extend({
  seq: z.number().int().positive(),
  bufferedAt: z.iso.datetime({ offset: true }).optional(),
});

/** Validates a stored position (read cursors, wake markers). */
export const bufferPositionSchema: z.ZodType<BufferPosition> = z.object({
  epoch: z.string().max(64),
  seq: z.number().int().nonnegative(),
  at: z.iso.datetime({ offset: true }),
});

/** Where `entry` sits in the buffer incarnation `epoch`. */
export function positionOf(entry: Pick<BufferEntry, "seq" | "at">, epoch: string): BufferPosition {
  return { epoch, seq: entry.seq, at: entry.at };
}

/** Whether `entry` (of buffer incarnation `epoch`) comes after `position`. */
export function isAfter(
  entry: Pick<BufferEntry, "seq" | "at">,
  epoch: string,
  position: BufferPosition | undefined,
): boolean {
  if (position === undefined) return true;
  if (position.epoch !== "" && position.epoch === epoch) return entry.seq > position.seq;
  return Date.parse(entry.at) > Date.parse(position.at);
}

/** The later of two positions (by seq within one epoch, by time otherwise). */
export function laterOf(a: BufferPosition | undefined, b: BufferPosition): BufferPosition {
  if (a === undefined) return b;
  if (a.epoch !== "" && a.epoch === b.epoch) return b.seq > a.seq ? b : a;
  return Date.parse(b.at) > Date.parse(a.at) ? b : a;
}

/** The entry as stored: text capped at `maxChars` with a visible marker. */
export function capEntryText<T extends { readonly text: string }>(entry: T, maxChars: number): T {
  if (entry.text.length <= maxChars) return entry;
  return {
    ...entry,
    text: clipWithMarker(entry.text, maxChars, (dropped) => `… [${dropped} more characters not kept]`),
  };
}
