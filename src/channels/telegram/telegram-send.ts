/**
 * One chat (and forum topic) as a place to write: every send and chat action carries the topic's
 * message_thread_id, replies point at the triggering message, HTML that Telegram cannot parse is
 * re-sent as plain text, and "message is not modified" counts as success. The only module that
 * turns our HTML into Bot API calls.
 */
import { type Api, InputFile } from "grammy";
import type { ForceReply, InlineKeyboardMarkup } from "grammy/types";
import type { Logger } from "pino";
import type { ThreadTarget } from "../../core/thread-target.js";
import { errorText, isMessageGone, isNotModified, isParseError } from "./telegram-errors.js";
import { htmlToPlainText } from "./telegram-html.js";

/** Where a thread's messages go on Telegram, derived from a ThreadTarget. */
export interface ChatAddress {
  readonly chatId: number;
  /** Forum topic; never 1 (the General topic takes no explicit id). */
  readonly threadId?: number;
  /** The message that started the current exchange, replied to when posting. */
  readonly replyTo?: number;
  readonly isPrivate: boolean;
}

/**
 * A Telegram id given as text or a number (chat and topic ids are stored as strings, a reply id
 * as a number; a tool names a chat as text): a whole number written in digits, or undefined.
 */
export function telegramIdOf(value: unknown): number | undefined {
  if (typeof value === "string" && !/^-?\d+$/.test(value.trim())) return undefined;
  if (typeof value !== "string" && typeof value !== "number") return undefined;
  const id = Number(typeof value === "string" ? value.trim() : value);
  return Number.isSafeInteger(id) ? id : undefined;
}

/**
 * Read a Telegram ThreadTarget (validated when it entered the system: this converts, once per
 * turn, without a schema pass); throws a clear error for a target from elsewhere.
 */
export function addressOf(target: ThreadTarget): ChatAddress {
  const chatId = telegramIdOf(target.channel);
  const thread = target.thread === undefined ? undefined : telegramIdOf(target.thread);
  const replyTo = target.extra?.replyTo === undefined ? undefined : telegramIdOf(target.extra.replyTo);
  const declaredType = target.extra?.chatType;
  const readable =
    target.platform === "telegram" &&
    chatId !== undefined &&
    (target.thread === undefined || (thread !== undefined && thread > 0)) &&
    (target.extra?.replyTo === undefined || (replyTo !== undefined && replyTo > 0)) &&
    (declaredType === undefined || typeof declaredType === "string");
  if (!readable) throw new Error(`not a Telegram thread target: ${JSON.stringify(target)}`);
  const chatType = declaredType ?? (chatId > 0 ? "private" : "group");
  return {
    chatId,
    ...(thread !== undefined && thread !== 1 ? { threadId: thread } : {}),
    ...(replyTo !== undefined ? { replyTo } : {}),
    isPrivate: chatType === "private",
  };
}

export type EditResult = "edited" | "unchanged" | "gone";

/** What `sendAll` returns for no chunks. */
const NOTHING_SENT: Promise<undefined> = Promise.resolve(undefined);

/** Bot API calls for one chat address. */
export class ChatSender {
  constructor(
    private readonly api: Api,
    readonly address: ChatAddress,
    private readonly logger: Logger,
  ) {}

  private get topic(): { message_thread_id?: number } {
    return this.address.threadId === undefined ? {} : { message_thread_id: this.address.threadId };
  }

  /** Send one HTML message (≤ 4096 visible chars); falls back to plain text. Resolves with its id. */
  send(
    html: string,
    options: { replyMarkup?: InlineKeyboardMarkup | ForceReply; reply?: boolean } = {},
  ): Promise<number> {
    // Keys first, spreads after: see "Code on the message path" in docs/architecture.md.
    const other = {
      link_preview_options: { is_disabled: true },
      ...this.topic,
      ...(options.reply && this.address.replyTo !== undefined
        ? { reply_parameters: { message_id: this.address.replyTo, allow_sending_without_reply: true } }
        : {}),
      ...(options.replyMarkup ? { reply_markup: options.replyMarkup } : {}),
    };
    const { chatId } = this.address;
    // parse_mode first: see "Code on the message path" in docs/architecture.md.
    return this.api.sendMessage(chatId, html, { parse_mode: "HTML", ...other }).then(
      (sent) => sent.message_id,
      (error: unknown) => {
        if (!isParseError(error)) throw error;
        this.logger.warn({ err: errorText(error) }, "telegram rejected our HTML; sending plain text");
        return this.api.sendMessage(chatId, htmlToPlainText(html), other).then((sent) => sent.message_id);
      },
    );
  }

  /**
   * Send chunks in order; only the first replies to the trigger, only the last has `lastMarkup`.
   * Resolves with the last one's id (undefined for no chunks).
   */
  sendAll(
    chunks: readonly string[],
    options: { reply?: boolean; lastMarkup?: InlineKeyboardMarkup | undefined } = {},
  ): Promise<number | undefined> {
    return chunks.length === 0 ? NOTHING_SENT : this.sendFrom(chunks, 0, options);
  }

  /** Send `chunks` from `index` on, one after the other (see sendAll); resolves with the last one's id. */
  private sendFrom(
    chunks: readonly string[],
    index: number,
    options: { reply?: boolean; lastMarkup?: InlineKeyboardMarkup | undefined },
  ): Promise<number> {
    const last = index === chunks.length - 1;
    const sent = this.send(chunks[index] as string, {
      reply: options.reply === true && index === 0,
      replyMarkup: last ? options.lastMarkup : undefined,
    });
    return last ? sent : sent.then(() => this.sendFrom(chunks, index + 1, options));
  }

  /** Replace a message's text (and keyboard: none unless given). */
  async edit(messageId: number, html: string, replyMarkup?: InlineKeyboardMarkup): Promise<EditResult> {
    const other = {
      link_preview_options: { is_disabled: true },
      ...(replyMarkup ? { reply_markup: replyMarkup } : {}),
    };
    try {
      await this.api.editMessageText(this.address.chatId, messageId, html, { parse_mode: "HTML", ...other });
      return "edited";
    } catch (error) {
      if (isNotModified(error)) return "unchanged";
      if (isMessageGone(error)) return "gone";
      if (!isParseError(error)) throw error;
      this.logger.warn({ err: errorText(error) }, "telegram rejected our HTML edit; using plain text");
      try {
        await this.api.editMessageText(this.address.chatId, messageId, htmlToPlainText(html), other);
        return "edited";
      } catch (retry) {
        if (isNotModified(retry)) return "unchanged";
        if (isMessageGone(retry)) return "gone";
        throw retry;
      }
    }
  }

  /** Show or replace a private chat's streaming draft (Bot API 9.5+). */
  async draft(draftId: number, html: string): Promise<void> {
    const other = { can_stop: true, ...this.topic };
    try {
      await this.api.sendMessageDraft(this.address.chatId, draftId, html, { parse_mode: "HTML", ...other });
    } catch (error) {
      if (!isParseError(error)) throw error;
      await this.api.sendMessageDraft(this.address.chatId, draftId, htmlToPlainText(html), other);
    }
  }

  /** "typing…" for about five seconds. */
  async typing(): Promise<void> {
    await this.api.sendChatAction(this.address.chatId, "typing", this.topic);
  }

  /**
   * Upload a file (a path on disk, or its bytes) under `name` into this chat and topic, with a
   * plain-text caption, as a reply to `replyTo` when given; returns the message id.
   */
  async document(
    file: string | Uint8Array,
    name: string,
    options: { readonly caption?: string | undefined; readonly replyTo?: number } = {},
  ): Promise<number> {
    const sent = await this.api.sendDocument(this.address.chatId, new InputFile(file, name), {
      ...this.topic,
      ...(options.caption ? { caption: options.caption } : {}),
      ...(options.replyTo === undefined
        ? {}
        : { reply_parameters: { message_id: options.replyTo, allow_sending_without_reply: true } }),
    });
    return sent.message_id;
  }
}
