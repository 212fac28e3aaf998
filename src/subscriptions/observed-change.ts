/**
 * ObservedChange: what a channel adapter reports when a message it saw in a channel is edited or
 * deleted on the platform (Slack `message_changed` / `message_deleted`, Telegram
 * `edited_message` / `edited_channel_post`; Telegram reports no deletions to bots), so the
 * subscription service can revise the buffered copy. Validated at this boundary.
 */
import { z } from "zod";

interface ChangedMessage {
  readonly platform: string;
  /** Slack team id / Telegram "tg" (as in ObservedMessage.workspace). */
  readonly workspace: string;
  /** Slack channel id / Telegram chat id (the chat's session id, as ObservedMessage.channel). */
  readonly channel: string;
  /** The message's id: Slack ts / Telegram message_id. */
  readonly id: string;
}

/** A message deleted, or edited to `text` (`mentionsBot`: the platform marks the edit as addressed to the bot). */
export type ObservedChange =
  | (ChangedMessage & { readonly change: "deleted" })
  | (ChangedMessage & { readonly change: "edited"; readonly text: string; readonly mentionsBot: boolean });

const idText = z.string().min(1).max(120);
const changed = { platform: idText, workspace: idText, channel: idText, id: idText };

export const observedChangeSchema: z.ZodType<ObservedChange> = z.discriminatedUnion("change", [
  z.object({ ...changed, change: z.literal("deleted") }),
  z.object({ ...changed, change: z.literal("edited"), text: z.string(), mentionsBot: z.boolean() }),
]);
