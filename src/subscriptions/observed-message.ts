/**
 * ObservedMessage: what a channel adapter reports for every message it sees in any channel, so
 * the subscription service can buffer it and run triggers. Validated at this boundary.
 */
import { z } from "zod";
import { type BufferAuthor, bufferAuthorSchema, type BufferEntryInput } from "./buffer-entry.js";

export interface ObservedMessage {
  readonly platform: string;
  /** Slack team id / Telegram "tg" (as in ThreadTarget.workspace). */
  readonly workspace: string;
  /** Slack channel id / Telegram chat id. */
  readonly channel: string;
  /** Slack thread_ts (replies only) / Telegram message_thread_id (forum topics). */
  readonly thread?: string;
  /** Slack ts / Telegram message_id. */
  readonly id: string;
  readonly author: BufferAuthor;
  readonly text: string;
  /** ISO time the platform says it was sent. */
  readonly at: string;
  readonly permalink?: string;
  /** The platform marks it as addressed to the bot (app_mention, mention entity, reply to the bot). */
  readonly mentionsBot: boolean;
}

const idText = z.string().min(1).max(120);

export const observedMessageSchema: z.ZodType<ObservedMessage> = z.object({
  platform: idText,
  workspace: idText,
  channel: idText,
  thread: idText.optional(),
  id: idText,
  author: bufferAuthorSchema,
  text: z.string(),
  at: z.iso.datetime({ offset: true }),
  permalink: z.string().max(2_000).optional(),
  mentionsBot: z.boolean(),
});

/** The buffer entry for an observed message. */
export function entryInputOf(message: ObservedMessage, mentionsBot: boolean): BufferEntryInput {
  return {
    id: message.id,
    author: message.author,
    at: message.at,
    text: message.text,
    ...(message.thread !== undefined ? { thread: message.thread } : {}),
    ...(message.permalink !== undefined ? { permalink: message.permalink } : {}),
    ...(mentionsBot ? { mentionsBot: true } : {}),
  };
}
