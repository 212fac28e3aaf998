/**
 * The live reply of one turn: a preview that follows the agent at a rate Telegram tolerates and
 * ends in the real answer exactly once. In private chats it is a sendMessageDraft preview (with
 * Telegram's own stop button) replaced by one real sendMessage per chunk at the end; elsewhere —
 * or where drafts are unsupported — a message with a Stop button, edited at most every 1.1 s
 * (private) / 3.1 s (groups) and finally edited into the first chunk of the answer. Identical
 * views are never re-sent; a draft update the send limit had no spare room for (see
 * telegram-throttle.ts) skips a beat. The first preview waits `firstPreviewMs` from the turn's
 * start (and content that comes later one more change), and a turn over by then sends only the
 * answer. A forum topic closed or deleted under the turn ends its previews (one log line naming
 * it): nothing more is tried there until the final answer. The pacing is the shared EditPacer's;
 * this file supplies Telegram's budget and calls.
 */
import type { InlineKeyboardMarkup } from "grammy/types";
import type { Logger } from "pino";
import { EditPacer, type SendOutcome } from "../shared/edit-pacer.js";
import { STOP_KEYBOARD } from "./telegram-card.js";
import { errorText, isTopicGone, isUnsupported } from "./telegram-errors.js";
import type { ChatSender } from "./telegram-send.js";
import { SendSkipped } from "./telegram-throttle.js";

export interface StreamTiming {
  /** Minimum gap between two preview updates (edits or drafts). */
  readonly intervalMs: number;
  /** Delay from the turn's start before the first preview, so quick answers go out as one message. */
  readonly firstPreviewMs: number;
}

export const PRIVATE_TIMING: StreamTiming = Object.freeze({ intervalMs: 1100, firstPreviewMs: 250 });
export const GROUP_TIMING: StreamTiming = Object.freeze({ intervalMs: 3100, firstPreviewMs: 250 });

/** Whether this bot's Bot API server takes sendMessageDraft; shared by all turns, learnt once. */
export interface DraftSupport {
  enabled: boolean;
}

export interface LiveReplyOptions {
  readonly sender: ChatSender;
  readonly timing: StreamTiming;
  /** Present in private chats: the draft id for this turn and the shared support flag. */
  readonly draft?: { readonly id: number; readonly support: DraftSupport };
  readonly logger: Logger;
}

/** What `finish` returns when called again. */
const FINISHED: Promise<void> = Promise.resolve();

/** One turn's preview and final delivery. */
export class LiveReply {
  /** Renders the current view; called only when a preview is due, never per event. */
  private view: (() => string) | undefined;
  private shown = "";
  private messageId: number | undefined;
  private readonly pacer: EditPacer;
  private finished = false;
  /** The turn's topic was closed or deleted: no more previews. */
  private topicGone = false;
  /** When a preview last reached the chat (Date.now()), if one did. */
  shownAt: number | undefined;

  constructor(private readonly options: LiveReplyOptions) {
    const { intervalMs, firstPreviewMs } = options.timing;
    this.pacer = new EditPacer({
      budget: { intervalMs, firstDelayMs: firstPreviewMs },
      send: () => this.preview(),
      onError: (error) => this.options.logger.warn({ err: errorText(error) }, "telegram preview failed"),
    });
  }

  private get useDraft(): boolean {
    return this.options.draft?.support.enabled === true && this.messageId === undefined;
  }

  /**
   * The preview changed; `view` renders it (≤ 4096 visible chars, "" for nothing to show) when
   * the rate allows a send.
   */
  show(view: () => string): void {
    if (this.finished || this.topicGone) return;
    this.view = view;
    this.pacer.changed();
  }

  private async preview(): Promise<SendOutcome> {
    const html = this.view?.() ?? "";
    if (this.topicGone || html === "" || html === this.shown) return "unchanged";
    try {
      await this.deliver(html);
    } catch (error) {
      // A draft update yields to messages while the bot's send limit is busy: skip this beat.
      if (error instanceof SendSkipped) return { retryAfterMs: 0 };
      if (!isTopicGone(error)) throw error;
      // Never sent elsewhere instead (General is not the topic's place): the log says where.
      this.topicGone = true;
      const { chatId, threadId } = this.options.sender.address;
      this.options.logger.warn(
        { err: errorText(error), chatId, topicId: threadId },
        "telegram: topic closed or deleted; previews stopped for this turn",
      );
      return "unchanged";
    }
    return "sent";
  }

  private async deliver(html: string): Promise<void> {
    const { sender, draft } = this.options;
    if (draft && this.useDraft && (await this.sentAsDraft(draft, html))) return;
    if (this.messageId === undefined) {
      this.messageId = await sender.send(html, { reply: true, replyMarkup: STOP_KEYBOARD });
    } else if ((await sender.edit(this.messageId, html, STOP_KEYBOARD)) === "gone") {
      this.messageId = await sender.send(html, { replyMarkup: STOP_KEYBOARD });
    }
    this.shown = html;
    this.shownAt = Date.now();
  }

  /** Show the preview as a draft; false (and drafts off for every turn) where the server has none. */
  private async sentAsDraft(draft: NonNullable<LiveReplyOptions["draft"]>, html: string): Promise<boolean> {
    const drafted = await this.options.sender.draft(draft.id, html).then(
      () => true,
      (error: unknown) => {
        if (!isUnsupported(error)) throw error;
        this.options.logger.info(
          { err: errorText(error) },
          "sendMessageDraft unsupported; previews use edits",
        );
        return false;
      },
    );
    if (drafted) {
      this.shown = html;
      this.shownAt = Date.now();
    } else draft.support.enabled = false;
    return drafted;
  }

  /**
   * Deliver the answer (already split into chunks) exactly once: the preview message becomes the
   * first chunk, the rest follow as new messages; the last one carries `markup` if given. Settles
   * once delivered; later calls do nothing.
   */
  finish(chunks: readonly string[], markup?: InlineKeyboardMarkup): Promise<unknown> {
    if (this.finished) return FINISHED;
    this.finished = true;
    // A quick answer (no preview sent nor on its way) goes out at once, as new messages.
    const previewed = this.messageId !== undefined || this.pacer.sending;
    const previewDone = this.pacer.finish();
    if (!previewed) return this.options.sender.sendAll(chunks, { reply: true, lastMarkup: markup });
    return this.finishPreview(previewDone, chunks, markup);
  }

  /** `finish` once a preview was sent or is on its way: the preview message takes the first chunk. */
  private async finishPreview(
    previewDone: Promise<void>,
    chunks: readonly string[],
    markup: InlineKeyboardMarkup | undefined,
  ): Promise<void> {
    await previewDone;
    const { sender } = this.options;
    let rest = chunks;
    const first = chunks[0];
    if (this.messageId !== undefined && first !== undefined) {
      await this.pacer.nextSlot();
      const firstMarkup = chunks.length === 1 ? markup : undefined;
      if ((await sender.edit(this.messageId, first, firstMarkup)) !== "gone") rest = chunks.slice(1);
    }
    await sender.sendAll(rest, { reply: rest === chunks, lastMarkup: markup });
  }
}
