/**
 * ThreadOutput for Telegram: the session layer's handle on one chat or forum topic. Turns render
 * through a TelegramTurnRenderer (drafts in private chats where supported, send + edit
 * elsewhere), cards become inline-keyboard messages (a card whose code is cut gets the whole of it
 * as a plain-text document replying to it, see card-attachment.ts), short texts are sent as HTML.
 */
import type { Api } from "grammy";
import type { Logger } from "pino";
import type { Card, CardRef } from "../../core/card.js";
import type { ThreadOutput, TurnInfo, TurnRenderer } from "../../core/thread-output.js";
import type { ThreadTarget } from "../../core/thread-target.js";
import { turnLogger } from "../../logging/logger.js";
import { ATTACHMENT_CAPTION, attachedFile, postCardWithAttachment } from "../shared/card-attachment.js";
import { cardWithoutButtons, cutsCode, renderCard } from "./telegram-card.js";
import { errorText, isKeyboardRefused } from "./telegram-errors.js";
import { markdownToTelegramHtml } from "./telegram-html.js";
import { draftIdOf, TelegramTurnRenderer } from "./telegram-renderer.js";
import { addressOf, ChatSender } from "./telegram-send.js";
import { splitTelegramHtml } from "./telegram-split.js";
import { type DraftSupport, GROUP_TIMING, PRIVATE_TIMING, type StreamTiming } from "./telegram-stream.js";

export interface TelegramOutputOptions {
  readonly api: Api;
  readonly logger: Logger;
  readonly drafts: DraftSupport;
  /** Overrides for the preview cadence (tests); Telegram-safe defaults otherwise. */
  readonly timing?: { readonly private?: StreamTiming; readonly group?: StreamTiming };
}

/**
 * The mark a card's ref carries when Telegram refused its keyboard and it went without buttons:
 * its updates go the same way (the same keyboard, or a shorter one, would be refused again).
 */
const WITHOUT_BUTTONS = "withoutButtons";

/** One Telegram thread as the session layer sees it. */
export class TelegramThreadOutput implements ThreadOutput {
  private threadSender: ChatSender | undefined;

  constructor(
    private readonly options: TelegramOutputOptions,
    private readonly target: ThreadTarget,
  ) {}

  /** The thread's own sender, read from the target when first needed (turns mostly use their own). */
  private get sender(): ChatSender {
    this.threadSender ??= new ChatSender(this.options.api, addressOf(this.target), this.options.logger);
    return this.threadSender;
  }

  beginTurn(info: TurnInfo): TurnRenderer {
    const logger = turnLogger(this.options.logger, info);
    const sender = this.senderFor(info.replyTo, logger);
    const { isPrivate } = sender.address;
    const timing = isPrivate
      ? (this.options.timing?.private ?? PRIVATE_TIMING)
      : (this.options.timing?.group ?? GROUP_TIMING);
    return new TelegramTurnRenderer({
      sender,
      logger,
      live: {
        timing,
        ...(isPrivate ? { draft: { id: draftIdOf(info.turnId), support: this.options.drafts } } : {}),
      },
    });
  }

  /**
   * The sender for one turn: replies thread to the turn's trigger (`replyTo`, the triggering
   * message's target extra) when known and readable, else to the thread's stored trigger.
   */
  private senderFor(replyTo: TurnInfo["replyTo"], logger: Logger): ChatSender {
    if (replyTo === undefined) return this.sender;
    try {
      const address = addressOf({ ...this.target, extra: { ...this.target.extra, ...replyTo } });
      return new ChatSender(this.options.api, address, logger);
    } catch (error) {
      logger.warn(
        { err: errorText(error), replyTo },
        "unreadable reply target for a turn; using the thread's",
      );
      return this.sender;
    }
  }

  async postCard(card: Card): Promise<CardRef> {
    return postCardWithAttachment(
      card,
      {
        cuts: cutsCode,
        post: (shown) => this.post(shown),
        attach: async (ref, file) => {
          await this.sender.document(Buffer.from(file.text, "utf8"), file.name, {
            caption: ATTACHMENT_CAPTION,
            replyTo: Number(ref.messageId),
          });
        },
        update: (ref, shown) => this.updateCard(ref, shown),
      },
      this.options.logger,
    );
  }

  /**
   * Send the card's message, replying to the thread's trigger. A keyboard Telegram refuses (too
   * many or too long buttons) does not leave the card unposted: it goes without buttons, its
   * options written out, asking for a typed reply (cardWithoutButtons); its ref is marked so.
   */
  private async post(card: Card): Promise<CardRef> {
    try {
      return await this.send(card);
    } catch (error) {
      if (card.buttons.length === 0 || !isKeyboardRefused(error)) throw error;
      this.options.logger.warn(
        { err: errorText(error) },
        "telegram refused a card's keyboard; posting it without",
      );
      return { ...(await this.send(cardWithoutButtons(card))), [WITHOUT_BUTTONS]: 1 };
    }
  }

  private async send(card: Card): Promise<CardRef> {
    const { html, replyMarkup, forceReply } = renderCard(card);
    // A reply is asked of the person the card replies to (selective): the thread's trigger.
    const markup = forceReply ? { force_reply: true as const, selective: true } : replyMarkup;
    const messageId = await this.sender.send(html, {
      reply: true,
      ...(markup ? { replyMarkup: markup } : {}),
    });
    return { messageId: String(messageId), chatId: String(this.sender.address.chatId) };
  }

  async updateCard(ref: CardRef, card: Card): Promise<void> {
    const shown = ref[WITHOUT_BUTTONS] === 1 ? cardWithoutButtons(card) : card;
    const { html, replyMarkup } = renderCard(shown, attachedFile(card, ref));
    const result = await this.sender.edit(Number(ref.messageId), html, replyMarkup);
    if (result === "gone") {
      this.options.logger.info(
        { messageId: ref.messageId },
        "telegram card message is gone; posting the update anew",
      );
      await this.sender.send(html, replyMarkup ? { replyMarkup } : {});
    }
  }

  async postText(text: string): Promise<void> {
    await this.sender.sendAll(splitTelegramHtml(markdownToTelegramHtml(text)), { reply: true });
  }
}
