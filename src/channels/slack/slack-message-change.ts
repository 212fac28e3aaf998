/**
 * Slack's edits and deletions of channel messages — `message` events of subtype
 * `message_changed` (the edited message whole under `message`) and `message_deleted` (its ts
 * under `deleted_ts`) — validated and turned into the ObservedChange channel subscriptions revise
 * their buffered copy with (so catch_up no longer shows a deleted message, a pasted secret).
 * Kept apart from slack-events.ts, whose messages are people talking: these never reach a turn.
 */
import { z } from "zod";
import type { ObservedChange } from "../../subscriptions/observed-change.js";
import { type BotIdentity, mentionsBot, messageText } from "./slack-events.js";

const slackTs = z.string().regex(/^\d+\.\d+$/);

const changedSchema = z.looseObject({
  type: z.literal("message"),
  subtype: z.literal("message_changed"),
  channel: z.string().min(1),
  channel_type: z.string().optional(),
  message: z.looseObject({
    ts: slackTs,
    text: z.string().optional(),
    /** What Slack clients show; validated where it is read (messageText). */
    blocks: z.unknown().optional(),
  }),
});

const deletedSchema = z.looseObject({
  type: z.literal("message"),
  subtype: z.literal("message_deleted"),
  channel: z.string().min(1),
  channel_type: z.string().optional(),
  deleted_ts: slackTs,
});

const changeSchema = z.discriminatedUnion("subtype", [changedSchema, deletedSchema]);

/** Whether a message event is an edit or deletion (its shape not yet checked). */
export function isMessageChange(event: unknown): boolean {
  const subtype = (event as { readonly subtype?: unknown } | null)?.subtype;
  return subtype === "message_changed" || subtype === "message_deleted";
}

/**
 * The change a `message_changed` / `message_deleted` event reports, outside DMs (a DM is never
 * watched); undefined for any other event, or one of an unexpected shape.
 */
export function slackChangeOf(event: unknown, bot: BotIdentity): ObservedChange | undefined {
  const parsed = changeSchema.safeParse(event);
  if (!parsed.success || parsed.data.channel_type === "im") return undefined;
  const change = parsed.data;
  const where = { platform: "slack", workspace: bot.teamId, channel: change.channel };
  if (change.subtype === "message_deleted") return { ...where, id: change.deleted_ts, change: "deleted" };
  const { message } = change;
  return {
    ...where,
    id: message.ts,
    change: "edited",
    text: messageText(message, ""),
    mentionsBot: mentionsBot(message, bot.userId),
  };
}
