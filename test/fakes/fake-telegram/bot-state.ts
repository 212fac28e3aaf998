/**
 * The fake Bot API's world: chats, the messages in them (the bot's and the users'), stored files
 * and open callback queries. Method handlers read and change it; tests inspect it.
 */
import type { UploadedFile } from "./http-body.js";

/** A Bot API error answer: `{ ok: false, error_code, description, parameters }`. */
export class BotApiError extends Error {
  constructor(
    readonly code: number,
    readonly description: string,
    readonly parameters?: { readonly retry_after?: number; readonly migrate_to_chat_id?: number },
  ) {
    super(description);
  }
}

export interface FakeChat {
  readonly id: number;
  readonly type: "private" | "group" | "supergroup" | "channel";
  readonly title?: string;
  /**
   * A forum supergroup: its threads are topics (`is_topic_message`). In other supergroups a
   * message_thread_id marks a reply thread only, and sends may not name one.
   */
  readonly is_forum?: boolean;
  readonly first_name?: string;
  readonly username?: string;
}

export interface FakeUser {
  readonly id: number;
  readonly first_name: string;
  readonly username?: string;
  readonly is_bot?: boolean;
}

/** A message as it currently stands (edits replace text and markup). */
export interface StoredMessage {
  readonly message_id: number;
  readonly chat_id: number;
  readonly from: FakeUser;
  readonly date: number;
  readonly message_thread_id?: number;
  readonly reply_to_message_id?: number;
  /** Visible text (after entity parsing). */
  text: string;
  /** What the sender passed as `text` / `caption` (HTML source when parse_mode is HTML). */
  source: string;
  parse_mode?: string;
  reply_markup?: { inline_keyboard: { text: string; callback_data?: string }[][] };
  /** The force_reply the message was sent with (selective: only for the replied-to sender and mentions). */
  readonly force_reply?: { readonly selective: boolean };
  edits: number;
  readonly document?: UploadedFile;
}

export interface StoredFile {
  readonly file_id: string;
  readonly file_unique_id: string;
  readonly file_path: string;
  readonly content: Buffer;
}

export interface OpenQuery {
  readonly id: string;
  readonly chat_id: number;
  readonly message_id: number;
  readonly from: FakeUser;
  answer?: { text?: string; show_alert?: boolean };
}

/** All state of one fake Bot API server. */
export class BotState {
  readonly chats = new Map<number, { chat: FakeChat; nextMessageId: number }>();
  readonly messages = new Map<string, StoredMessage>();
  readonly files = new Map<string, StoredFile>();
  readonly queries = new Map<string, OpenQuery>();
  readonly drafts: { chat_id: number; draft_id: number; text: string; message_thread_id?: number }[] = [];
  /**
   * Chat members' statuses ("creator", "administrator", "member", "left", …) for chats whose
   * membership a test set; getChatMember answers "member" for anyone in chats not listed here.
   */
  readonly members = new Map<number, Map<number, string>>();
  /** Groups upgraded to supergroups: old chat id → the supergroup's id. */
  readonly migrated = new Map<number, number>();
  commands: unknown[] = [];
  webhook: { url: string; secret_token?: string } | undefined;
  private nextFile = 1;
  private nextQuery = 1;

  /** Register (or look up) a chat. */
  chat(chat: FakeChat): FakeChat {
    const known = this.chats.get(chat.id);
    if (known) return known.chat;
    this.chats.set(chat.id, { chat, nextMessageId: 1 });
    return chat;
  }

  /** Set a user's (or the bot's) status in a chat; others in that chat are then "left". */
  setMember(chatId: number, userId: number, status: string): void {
    const members = this.members.get(chatId) ?? new Map<number, string>();
    members.set(userId, status);
    this.members.set(chatId, members);
  }

  /** The chat a call names; a group upgraded to a supergroup answers as Telegram does. */
  requireChat(chatId: unknown): FakeChat {
    const movedTo = this.migrated.get(Number(chatId));
    if (movedTo !== undefined) {
      throw new BotApiError(400, "Bad Request: group chat was upgraded to a supergroup chat", {
        migrate_to_chat_id: movedTo,
      });
    }
    const known = this.chats.get(Number(chatId));
    if (!known) throw new BotApiError(400, "Bad Request: chat not found");
    return known.chat;
  }

  message(chatId: number, messageId: number): StoredMessage | undefined {
    return this.messages.get(`${chatId}:${messageId}`);
  }

  /** Store a new message and return it. */
  addMessage(fields: Omit<StoredMessage, "message_id" | "date" | "edits">): StoredMessage {
    const entry = this.chats.get(fields.chat_id);
    if (!entry) throw new BotApiError(400, "Bad Request: chat not found");
    const message: StoredMessage = {
      ...fields,
      message_id: entry.nextMessageId++,
      date: Math.floor(Date.now() / 1000),
      edits: 0,
    };
    this.messages.set(`${message.chat_id}:${message.message_id}`, message);
    return message;
  }

  /**
   * The reply thread a reply joins in a supergroup that is no forum: the thread of the message it
   * replies to, or that message's own id (a first reply starts a thread there). None elsewhere.
   */
  replyThreadOf(chat: FakeChat, replyTo: number | undefined): number | undefined {
    if (replyTo === undefined || chat.type !== "supergroup" || chat.is_forum === true) return undefined;
    return this.message(chat.id, replyTo)?.message_thread_id ?? replyTo;
  }

  /** Bot messages in one chat (optionally one topic), oldest first. */
  botMessages(chatId: number, threadId?: number): StoredMessage[] {
    return [...this.messages.values()].filter(
      (message) =>
        message.chat_id === chatId &&
        message.from.is_bot === true &&
        (threadId === undefined || message.message_thread_id === threadId),
    );
  }

  addFile(content: Buffer, name: string): StoredFile {
    const id = this.nextFile++;
    const file: StoredFile = {
      file_id: `file-${id}`,
      file_unique_id: `u${id}`,
      file_path: `documents/${id}-${name}`,
      content,
    };
    this.files.set(file.file_id, file);
    return file;
  }

  openQuery(chatId: number, messageId: number, from: FakeUser): OpenQuery {
    const query: OpenQuery = { id: `q${this.nextQuery++}`, chat_id: chatId, message_id: messageId, from };
    this.queries.set(query.id, query);
    return query;
  }
}
