/**
 * Reading Telegram messages: a zod schema for the fields we rely on, the thread target (chat +
 * forum topic), whether a group message is addressed to the bot (mention, reply to one of its
 * messages, or its command — checked by us even when privacy mode is off), the command in a
 * message, and the text with the bot's own mention removed. A message that starts with another
 * bot's command (`/new@OtherBot`, also after this bot's mention) is never the bot's, in a DM or as a
 * reply to it either: the shared command parser's rule (`isAnotherBotsCommand`) decides that.
 * Words that are not the sender's own — a forward, an inline bot's result sent through it — are
 * never a command, and travel as the words of their origin: telegram-word-origin.ts tells them.
 */
import { z } from "zod";
import type { PlatformUser, ThreadTarget } from "../../core/thread-target.js";
import { isAnotherBotsCommand } from "../../core/text-commands.js";
import { isOthersWords } from "./telegram-word-origin.js";

const userSchema = z.object({
  id: z.number().int(),
  is_bot: z.boolean().optional(),
  first_name: z.string(),
  last_name: z.string().optional(),
  username: z.string().optional(),
});

const entitySchema = z.object({
  type: z.string(),
  offset: z.number().int().nonnegative(),
  length: z.number().int().nonnegative(),
  user: userSchema.optional(),
});

const fileSchema = z.object({
  file_id: z.string().min(1),
  file_unique_id: z.string().min(1),
  file_size: z.number().int().nonnegative().optional(),
});

/** A name or title as the origin of a forward names it (Telegram caps them well below this). */
const originName = z.string().max(256);

/** A forward's origin no schema below reads (a type added later, a malformed one). */
const UNKNOWN_ORIGIN = { type: "unknown" } as const;

/**
 * Where a forwarded message came from (Bot API 7.0 MessageOrigin): a user, a user who hides
 * their account (only the name they go by, which anyone can take), a group or supergroup (sent on
 * its behalf), or a channel. Anything else, or a malformed origin, reads as unknown: never a
 * message dropped for it.
 */
const forwardOriginSchema = z
  .discriminatedUnion("type", [
    z.object({ type: z.literal("user"), sender_user: userSchema }),
    z.object({ type: z.literal("hidden_user"), sender_user_name: originName }),
    z.object({
      type: z.literal("chat"),
      sender_chat: z.object({ id: z.number().int(), title: originName.optional() }),
    }),
    z.object({
      type: z.literal("channel"),
      chat: z.object({ id: z.number().int(), title: originName.optional() }),
    }),
    z.object({ type: z.literal("unknown") }),
  ])
  .optional()
  .catch(UNKNOWN_ORIGIN);

export type ForwardOrigin = NonNullable<z.infer<typeof forwardOriginSchema>>;

/**
 * The parts of a Bot API Message the channel uses. Its ids are safe integers (zod 4's int()
 * refuses any other): message_id is the message's LanePosition (lane-stop-marks.ts), and ids go
 * back to Telegram as they came, so one past 2^53, which JSON cannot hold exactly, is malformed.
 */
export const telegramMessageSchema = z.object({
  message_id: z.number().int().positive(),
  date: z.number().int(),
  chat: z.object({
    id: z.number().int(),
    type: z.enum(["private", "group", "supergroup", "channel"]),
    title: z.string().optional(),
    username: z.string().optional(),
  }),
  from: userSchema.optional(),
  /** The chat a channel post (or an anonymous admin's message) was sent on behalf of. */
  sender_chat: z
    .object({
      id: z.number().int(),
      /** The chat's kind (channel, supergroup, …): a kind added later reads as absent. */
      type: z.string().optional().catch(undefined),
      title: z.string().optional(),
      username: z.string().optional(),
    })
    .optional(),
  text: z.string().optional(),
  caption: z.string().optional(),
  entities: z.array(entitySchema).optional(),
  caption_entities: z.array(entitySchema).optional(),
  message_thread_id: z.number().int().optional(),
  is_topic_message: z.boolean().optional(),
  /** Service messages of a group's upgrade to a supergroup (see telegram-migrations.ts). */
  migrate_to_chat_id: z.number().int().optional(),
  migrate_from_chat_id: z.number().int().optional(),
  // Only the fields below are read from a replied-to message: never a migrate_* field.
  reply_to_message: z
    .object({
      message_id: z.number().int(),
      from: userSchema.optional(),
      forum_topic_created: z.unknown().optional(),
    })
    .optional(),
  document: fileSchema
    .extend({ file_name: z.string().optional(), mime_type: z.string().optional() })
    .optional(),
  photo: z.array(fileSchema.extend({ width: z.number(), height: z.number() })).optional(),
  voice: fileSchema
    .extend({ duration: z.number().nonnegative().optional(), mime_type: z.string().optional() })
    .optional(),
  audio: fileSchema
    .extend({
      duration: z.number().nonnegative().optional(),
      file_name: z.string().optional(),
      mime_type: z.string().optional(),
    })
    .optional(),
  /** An item of an album: every item of one album carries the same id (telegram-albums.ts). */
  media_group_id: z.string().min(1).max(128).optional(),
  /** Kinds the bot cannot read: only that one came is read (telegram-files.ts notes them). */
  video: fileSchema.optional(),
  video_note: fileSchema.optional(),
  animation: fileSchema.optional(),
  contact: z.object({ phone_number: z.string() }).optional(),
  /** A sticker stands for its emoji, a shared location for its coordinates (standInText). */
  sticker: fileSchema.extend({ emoji: z.string().optional() }).optional(),
  location: z.object({ latitude: z.number(), longitude: z.number() }).optional(),
  /**
   * Where a forwarded message came from (Bot API 7.0; `forward_date` alone before it): its words
   * are not the sender's (telegram-hand-over.ts ownTextOf), nor is a forwarded voice message
   * their voice.
   */
  forward_origin: forwardOriginSchema,
  forward_date: z.number().optional(),
  /**
   * The inline bot a message was sent through: its content (a voice clip, a text) is that bot's
   * result, not something the sender recorded or typed (the sender picks a result by the title the
   * bot gives it, and may never see the text it sends). Whether it is there is read, and its id and
   * username when they are well formed (telegram-word-origin.ts).
   */
  via_bot: z.unknown().optional(),
  /** A channel post Telegram copied into the channel's linked discussion group: no person's. */
  is_automatic_forward: z.boolean().optional(),
});

export type TelegramMessage = z.infer<typeof telegramMessageSchema>;
export type TelegramUser = z.infer<typeof userSchema>;

/** telegramMessageSchema narrowed to the fields of an ordinary text message, all it usually has. */
const textMessageSchema = telegramMessageSchema.pick({
  message_id: true,
  date: true,
  chat: true,
  from: true,
  text: true,
  entities: true,
});

/**
 * A message read with telegramMessageSchema. A plain object with no field but a text message's
 * is read with the schema narrowed to those fields: the same verdict and result, since every
 * field it lacks is optional, without checking that each of two dozen others is absent. Its
 * fields are all its own string keys, enumerable or not (the whole schema reads either kind).
 */
export function parseTelegramMessage(value: unknown): z.ZodSafeParseResult<TelegramMessage> {
  const textOnly =
    typeof value === "object" &&
    value !== null &&
    Object.getPrototypeOf(value) === Object.prototype &&
    Object.getOwnPropertyNames(value).every((key) => Object.hasOwn(textMessageSchema.shape, key));
  return (textOnly ? textMessageSchema : telegramMessageSchema).safeParse(value);
}

/** The bot's own identity, for mentions and replies. */
export interface BotIdentity {
  readonly id: number;
  readonly username: string;
}

/** The sender Telegram puts in `from` for a group admin who "remains anonymous". */
const GROUP_ANONYMOUS_BOT_ID = 1087968824;

/** A message an anonymous admin sent as the group itself: no person can be told from it. */
export function isAnonymousAdmin(message: Pick<TelegramMessage, "from" | "sender_chat" | "chat">): boolean {
  return message.from?.id === GROUP_ANONYMOUS_BOT_ID && message.sender_chat?.id === message.chat.id;
}

/** The sender Telegram puts in `from` for a channel post copied into its linked discussion group. */
const TELEGRAM_SERVICE_ID = 777000;

/**
 * A channel post Telegram forwarded by itself into the channel's linked discussion group: nobody
 * sent it in the group, and nobody can be authorised or held to account for it.
 */
export function isAutomaticForward(message: Pick<TelegramMessage, "from" | "is_automatic_forward">): boolean {
  return message.is_automatic_forward === true || message.from?.id === TELEGRAM_SERVICE_ID;
}

/** The forum topic a message belongs to, if any (General and non-forum chats have none). */
export function topicOf(
  message: Pick<TelegramMessage, "is_topic_message" | "message_thread_id">,
): number | undefined {
  return message.is_topic_message &&
    message.message_thread_id !== undefined &&
    message.message_thread_id !== 1
    ? message.message_thread_id
    : undefined;
}

/**
 * Where a chat's (or topic's) session lives. `sessionChat` is the chat whose session this one
 * continues (a supergroup's former group), the chat itself by default; when it is another,
 * `extra.alsoKnownAs` names the chat's own (current) id, so that settings keyed by either id
 * (approvals.per_channel) reach the session. `extra` adds what replies need.
 */
export function chatTarget(
  chatId: number,
  topic: number | undefined,
  sessionChat: number = chatId,
  extra: Readonly<Record<string, string | number | boolean>> = {},
): ThreadTarget {
  const all = { ...extra, ...(sessionChat !== chatId ? { alsoKnownAs: chatId } : {}) };
  return {
    platform: "telegram",
    workspace: "tg",
    channel: String(sessionChat),
    ...(topic !== undefined ? { thread: String(topic) } : {}),
    ...(Object.keys(all).length > 0 ? { extra: all } : {}),
  };
}

/** The session target of `message` (see chatTarget), with the chat type and the message to reply to. */
export function targetOf(message: TelegramMessage, sessionChat: number = message.chat.id): ThreadTarget {
  return chatTarget(message.chat.id, topicOf(message), sessionChat, {
    chatType: message.chat.type,
    replyTo: message.message_id,
  });
}

/** A person as the session layer sees them. */
export function userOf(user: TelegramUser): PlatformUser {
  const full = [user.first_name, user.last_name].filter(Boolean).join(" ");
  return { id: String(user.id), name: user.username ? `@${user.username}` : full };
}

function body(message: TelegramMessage): { text: string; entities: readonly z.infer<typeof entitySchema>[] } {
  return message.text !== undefined
    ? { text: message.text, entities: message.entities ?? [] }
    : { text: message.caption ?? "", entities: message.caption_entities ?? [] };
}

function mentionsBot(text: string, entity: z.infer<typeof entitySchema>, bot: BotIdentity): boolean {
  if (entity.type === "text_mention") return entity.user?.id === bot.id;
  if (entity.type !== "mention") return false;
  return (
    text.slice(entity.offset, entity.offset + entity.length).toLowerCase() ===
    `@${bot.username.toLowerCase()}`
  );
}

/**
 * The slash command at the start of the message (`/mode auto`, `/mode@bot auto`), if any; a
 * forwarded message, or one sent through an inline bot, has none: the command is not the sender's.
 */
function leadingCommand(message: TelegramMessage): { command: string; args: string[] } | undefined {
  if (isOthersWords(message)) return undefined;
  const { text, entities } = body(message);
  const entity = entities.find((candidate) => candidate.type === "bot_command" && candidate.offset === 0);
  if (!entity) return undefined;
  const [command = ""] = text.slice(1, entity.length).split("@");
  const args = text.slice(entity.length).trim().split(/\s+/).filter(Boolean);
  return { command, args };
}

/**
 * Whether the message, read as the session layer reads it (without this bot's mention, so
 * `@coworker_bot /new@OtherBot` counts too), starts with another bot's command.
 */
function forAnotherBot(message: TelegramMessage, bot: BotIdentity): boolean {
  return isAnotherBotsCommand(textFor(message, bot), bot.username);
}

/** A slash command for this bot at the start of the message: `/mode auto` or `/mode@bot auto`. */
export function commandOf(
  message: TelegramMessage,
  bot: BotIdentity,
): { name: string; args: string[] } | undefined {
  const leading = leadingCommand(message);
  if (!leading || forAnotherBot(message, bot)) return undefined;
  return { name: leading.command.toLowerCase(), args: leading.args };
}

/**
 * Whether the bot should act on this message: never when it starts with another bot's command
 * (`/mode@OtherBot auto` is not ours to run, nor a message for the agent); otherwise always in
 * private chats; in groups only when it is mentioned, replied to, or commanded. In a forum topic
 * every message "replies" to the topic's first message; that is not a reply to the bot.
 */
export function isAddressedToBot(message: TelegramMessage, bot: BotIdentity): boolean {
  if (forAnotherBot(message, bot)) return false;
  if (message.chat.type === "private") return true;
  const { text, entities } = body(message);
  if (entities.some((entity) => mentionsBot(text, entity, bot))) return true;
  // Another bot's command was ruled out above: any leading command is this bot's.
  if (leadingCommand(message) !== undefined) return true;
  const replied = message.reply_to_message;
  const topicRoot =
    replied?.forum_topic_created !== undefined || replied?.message_id === message.message_thread_id;
  return replied?.from?.id === bot.id && !(message.is_topic_message === true && topicRoot);
}

/** The message text (or caption) without the bot's @mention. */
export function textFor(message: TelegramMessage, bot: BotIdentity): string {
  const { text, entities } = body(message);
  const mentions = entities
    .filter((entity) => entity.type === "mention" && mentionsBot(text, entity, bot))
    .sort((a, b) => b.offset - a.offset);
  let result = text;
  for (const entity of mentions)
    result = result.slice(0, entity.offset) + result.slice(entity.offset + entity.length);
  return result.replace(/[ \t]{2,}/g, " ").trim();
}

/**
 * The words a sticker or a shared location stands for, as the message's text: the sticker's emoji
 * (a few characters at most), the location's coordinates; "" for any other message.
 */
export function standInText(message: TelegramMessage): string {
  if (message.sticker) return [...(message.sticker.emoji ?? "")].slice(0, 8).join("") || "(a sticker)";
  if (message.location)
    return `shared a location: ${message.location.latitude}, ${message.location.longitude}`;
  return "";
}
