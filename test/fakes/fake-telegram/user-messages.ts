/**
 * What a user's message looks like when the fake delivers it: the Bot API Message with entities
 * Telegram would attach (bot commands, @mentions), replies, forum-topic fields (a topic message
 * "replies" to the topic's first message unless it is an explicit reply) and files. In a
 * supergroup that is no forum, a reply carries the reply thread's message_thread_id, never
 * `is_topic_message`.
 */
import { apiMessage } from "./bot-methods.js";
import type { BotState, FakeChat, FakeUser } from "./bot-state.js";

export interface UserMessageInput {
  readonly chat: FakeChat;
  readonly from: FakeUser;
  readonly text?: string;
  /**
   * Forum topic id: the message is a topic message (and implicitly "replies" to the topic root).
   * Not for other chats: there a reply (`replyTo`) joins its reply thread by itself.
   */
  readonly threadId?: number;
  /** An explicit reply to this message id in the same chat. */
  readonly replyTo?: number;
  readonly document?: { readonly content: Buffer; readonly name: string; readonly mime?: string };
  readonly photo?: { readonly content: Buffer; readonly width?: number; readonly height?: number };
  /** A voice note (OGG/Opus), delivered as `voice`. */
  readonly voice?: { readonly content: Buffer; readonly duration: number };
  readonly caption?: string;
  /** An album's item: every item of one album carries the same media_group_id. */
  readonly mediaGroupId?: string;
}

/** Entities Telegram would attach: bot commands starting a word, @mentions anywhere. */
function entitiesOf(text: string): Record<string, unknown>[] {
  const entities: Record<string, unknown>[] = [];
  for (const match of text.matchAll(/(^|\s)(\/[a-zA-Z0-9_]+(@[a-zA-Z0-9_]+)?)/g)) {
    const offset = (match.index ?? 0) + (match[1]?.length ?? 0);
    entities.push({ type: "bot_command", offset, length: match[2]!.length });
  }
  for (const match of text.matchAll(/(^|[^\w])(@[a-zA-Z0-9_]{3,})/g)) {
    entities.push({
      type: "mention",
      offset: (match.index ?? 0) + (match[1]?.length ?? 0),
      length: match[2]!.length,
    });
  }
  return entities;
}

/** Store a user's message in the fake's state and return it as the Bot API would deliver it. */
export function userMessage(state: BotState, input: UserMessageInput): Record<string, unknown> {
  const chat = state.chat(input.chat);
  const text = input.text ?? "";
  const file = input.document ?? input.photo ?? input.voice;
  const fileName = input.document?.name ?? (input.voice ? "voice.oga" : "photo.jpg");
  if (input.threadId !== undefined && chat.is_forum !== true)
    throw new Error(`fake Telegram: chat ${chat.id} is no forum; reply with replyTo instead of a threadId`);
  const thread = input.threadId ?? state.replyThreadOf(chat, input.replyTo);
  const stored = state.addMessage({
    chat_id: chat.id,
    from: input.from,
    text: input.caption ?? text,
    source: input.caption ?? text,
    ...(thread !== undefined ? { message_thread_id: thread } : {}),
    ...(input.replyTo !== undefined ? { reply_to_message_id: input.replyTo } : {}),
  });
  const message: Record<string, unknown> = { ...apiMessage(state, stored) };
  if (input.replyTo !== undefined) {
    const replied = state.message(chat.id, input.replyTo);
    if (replied) message.reply_to_message = apiMessage(state, replied);
  } else if (input.threadId !== undefined) {
    message.reply_to_message = {
      message_id: input.threadId,
      date: stored.date,
      chat,
      forum_topic_created: { name: `topic ${input.threadId}`, icon_color: 7322096 },
    };
  }
  const entities = entitiesOf(input.caption ?? text);
  if (file) {
    delete message.text;
    const saved = state.addFile(file.content, fileName);
    const meta = {
      file_id: saved.file_id,
      file_unique_id: saved.file_unique_id,
      file_size: file.content.length,
    };
    if (input.document) {
      message.document = { ...meta, file_name: input.document.name, mime_type: input.document.mime };
    } else if (input.voice) {
      message.voice = { ...meta, duration: input.voice.duration, mime_type: "audio/ogg" };
    } else {
      message.photo = [{ ...meta, width: input.photo?.width ?? 90, height: input.photo?.height ?? 90 }];
    }
    if (input.mediaGroupId !== undefined) message.media_group_id = input.mediaGroupId;
    if (input.caption !== undefined) {
      message.caption = input.caption;
      if (entities.length > 0) message.caption_entities = entities;
    }
  } else if (entities.length > 0) {
    message.entities = entities;
  }
  return message;
}
