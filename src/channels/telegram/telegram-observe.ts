/**
 * What the Telegram channel reports to channel subscriptions: every group, supergroup or channel
 * message the bot sees (also those not addressed to it) as an ObservedMessage — author, time,
 * text or caption, forum topic, a t.me permalink where Telegram has one, and whether it addresses
 * the bot — its edits (`edited_message` / `edited_channel_post`, as an ObservedChange; Telegram
 * reports no deletions to bots), and the bot's own removal from a chat (a `my_chat_member` update
 * to left / kicked).
 *
 * Both are reported under the chat's session id: a supergroup that was a group keeps the group's
 * id (telegram-migrations.ts), so a subscription made before the upgrade keeps hearing it. A
 * message sent as a chat (a channel's post, a post "as the channel", an anonymous admin) is that
 * chat's: it is credited to the chat, never to the shared account Telegram puts in `from`, and in
 * a group named as the chat it is ("Title (channel)", "Title (group, anonymous admin)"), never as
 * a person or a bot. A channel post Telegram forwards into its linked
 * discussion group by itself (the bot's own posts among them) is no one's message there and is
 * not reported: the channel's subscribers see it in the channel.
 */
import { z } from "zod";
import type { ObservedChange } from "../../subscriptions/observed-change.js";
import type { ObservedMessage } from "../../subscriptions/observed-message.js";
import { displayName, MAX_DISPLAY_NAME_CHARS } from "../../subscriptions/platform-directory.js";
import {
  type BotIdentity,
  isAddressedToBot,
  isAutomaticForward,
  type TelegramMessage,
  topicOf,
  userOf,
} from "./telegram-inbound.js";

/** A chat the bot was removed from, as subscriptions key it. */
export interface RemovedChat {
  readonly platform: "telegram";
  readonly workspace: "tg";
  readonly channel: string;
}

/** The chat the bot was removed from: its id and kind (the handlers look up its session id). */
export interface LeftChat {
  readonly id: number;
  readonly type: string;
}

const myChatMemberSchema = z.object({
  chat: z.object({ id: z.number().int(), type: z.string() }),
  new_chat_member: z.object({
    status: z.string(),
    user: z.object({ id: z.number().int() }),
  }),
});

/** Where people can open the message: public chats by username, supergroups and channels by id. */
function permalinkOf(message: TelegramMessage): string | undefined {
  const { chat } = message;
  if (chat.username) return `https://t.me/${chat.username}/${message.message_id}`;
  const id = String(chat.id);
  if ((chat.type === "supergroup" || chat.type === "channel") && id.startsWith("-100"))
    return `https://t.me/c/${id.slice(4)}/${message.message_id}`;
  return undefined;
}

/**
 * Who sent it: the chat it was sent as, else the person in `from`, else the chat itself. In a
 * group a chat's message stands among people's, so its name says what chat it is (see chatKindOf);
 * a broadcast channel's posts are all the channel's own.
 */
function authorOf(message: TelegramMessage): ObservedMessage["author"] {
  const { from, chat } = message;
  const sender = message.sender_chat;
  if (from && !sender) return { id: String(from.id), name: userOf(from).name, isBot: from.is_bot === true };
  const author = sender ?? chat;
  const title = author.title ?? (author.username ? `@${author.username}` : String(author.id));
  if (!sender || chat.type === "channel") return { id: String(author.id), name: title, isBot: false };
  // The kind is kept whole however long the title: it is what tells the chat from a person.
  const kind = ` (${chatKindOf(sender, chat)})`;
  const name = `${displayName(title, MAX_DISPLAY_NAME_CHARS - kind.length)}${kind}`;
  return { id: String(author.id), name, isBot: false };
}

/**
 * What chat a group message was sent as: a channel (its linked channel, or one the writer owns), the
 * group itself (an admin who remains anonymous), another group, or a chat of a kind not known here.
 */
function chatKindOf(
  sender: NonNullable<TelegramMessage["sender_chat"]>,
  chat: TelegramMessage["chat"],
): string {
  if (sender.type === "channel") return "channel";
  if (sender.id === chat.id) return "group, anonymous admin";
  return sender.type === "group" || sender.type === "supergroup" ? "group" : "chat";
}

function textOf(message: TelegramMessage): string {
  const text = message.text ?? message.caption ?? "";
  const attachment = message.document
    ? `[file: ${message.document.file_name ?? "document"}]`
    : message.photo
      ? "[photo]"
      : "";
  return [attachment, text].filter((part) => part.length > 0).join(" ");
}

/**
 * Whether a message is reported at all: one in a group, supergroup or channel, not the bot's own
 * nor an automatic forward.
 */
export function isObserved(message: TelegramMessage, bot: BotIdentity): boolean {
  return message.chat.type !== "private" && message.from?.id !== bot.id && !isAutomaticForward(message);
}

/**
 * The observed form of a message in a group, supergroup or channel, reported under `sessionChat`
 * (the group a supergroup was upgraded from; the chat itself by default); undefined for a message
 * not observed (isObserved).
 */
export function observedOf(
  message: TelegramMessage,
  bot: BotIdentity,
  sessionChat: number = message.chat.id,
): ObservedMessage | undefined {
  if (!isObserved(message, bot)) return undefined;
  const topic = topicOf(message);
  const permalink = permalinkOf(message);
  return {
    platform: "telegram",
    workspace: "tg",
    channel: String(sessionChat),
    ...(topic !== undefined ? { thread: String(topic) } : {}),
    id: String(message.message_id),
    author: authorOf(message),
    text: textOf(message),
    at: new Date(message.date * 1000).toISOString(),
    ...(permalink !== undefined ? { permalink } : {}),
    mentionsBot: isAddressedToBot(message, bot),
  };
}

/**
 * The change an edited message or channel post reports, as observedOf would report the message
 * (the same chat, id, text or caption and bot address); undefined for one not observed. Telegram
 * tells bots of no deletions.
 */
export function editOf(
  message: TelegramMessage,
  bot: BotIdentity,
  sessionChat: number = message.chat.id,
): ObservedChange | undefined {
  const observed = observedOf(message, bot, sessionChat);
  if (!observed) return undefined;
  const { platform, workspace, channel, id, text, mentionsBot } = observed;
  return { platform, workspace, channel, id, change: "edited", text, mentionsBot };
}

/** The chat the bot left or was removed from, when a `my_chat_member` update says so. */
export function leftChatOf(update: unknown, bot: BotIdentity): LeftChat | undefined {
  const parsed = myChatMemberSchema.safeParse(update);
  if (!parsed.success) return undefined;
  const { chat, new_chat_member: member } = parsed.data;
  if (member.user.id !== bot.id || (member.status !== "left" && member.status !== "kicked")) return undefined;
  return { id: chat.id, type: chat.type };
}

/** The removal as subscriptions key it: under the chat's session id (see observedOf). */
export function removedChatOf(sessionChat: number): RemovedChat {
  return { platform: "telegram", workspace: "tg", channel: String(sessionChat) };
}
