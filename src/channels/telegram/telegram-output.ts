/**
 * ThreadOutput for Telegram: the session layer's handle on one chat or forum topic. Turns render
 * through a TelegramTurnRenderer (drafts in private chats where supported, send + edit
 * elsewhere), cards become inline-keyboard messages, short texts are sent as HTML.
 */
import type { Api } from "grammy";
import type { Logger } from "pino";
import type { Card, CardRef } from "../../approvals/card.js";
import type { ThreadOutput, ThreadTarget, TurnRenderer } from "../../sessions/contracts.js";
import { renderCard } from "./telegram-card.js";
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

/** One Telegram thread as the session layer sees it. */
export class TelegramThreadOutput implements ThreadOutput {
  private readonly sender: ChatSender;

  constructor(
    private readonly options: TelegramOutputOptions,
    target: ThreadTarget,
  ) {
    this.sender = new ChatSender(options.api, addressOf(target), options.logger);
  }

  beginTurn(info: { readonly sessionId: string; readonly turnId: string }): TurnRenderer {
    const { isPrivate } = this.sender.address;
    const timing = isPrivate
      ? (this.options.timing?.private ?? PRIVATE_TIMING)
      : (this.options.timing?.group ?? GROUP_TIMING);
    return new TelegramTurnRenderer({
      sender: this.sender,
      logger: this.options.logger.child({ sessionId: info.sessionId, turnId: info.turnId }),
      live: {
        timing,
        ...(isPrivate ? { draft: { id: draftIdOf(info.turnId), support: this.options.drafts } } : {}),
      },
    });
  }

  async postCard(card: Card): Promise<CardRef> {
    const { html, replyMarkup } = renderCard(card);
    const messageId = await this.sender.send(html, { reply: true, ...(replyMarkup ? { replyMarkup } : {}) });
    return { messageId: String(messageId), chatId: String(this.sender.address.chatId) };
  }

  async updateCard(ref: CardRef, card: Card): Promise<void> {
    const { html, replyMarkup } = renderCard(card);
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
