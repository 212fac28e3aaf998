/**
 * The live reply of one turn: a preview that follows the agent at a rate Telegram tolerates and
 * ends in the real answer exactly once. In private chats it is a sendMessageDraft preview (with
 * Telegram's own stop button) replaced by one real sendMessage per chunk at the end; elsewhere —
 * or where drafts are unsupported — a message with a Stop button, edited at most every 1.1 s
 * (private) / 3.1 s (groups) and finally edited into the first chunk of the answer. Identical
 * views are never re-sent. A turn that ends before the first preview is due sends only the answer.
 */
import type { InlineKeyboardMarkup } from "grammy/types";
import type { Logger } from "pino";
import { STOP_KEYBOARD } from "./telegram-card.js";
import { errorText, isUnsupported } from "./telegram-errors.js";
import type { ChatSender } from "./telegram-send.js";

export interface StreamTiming {
  /** Minimum gap between two preview updates (edits or drafts). */
  readonly intervalMs: number;
  /** Delay before the first preview, so quick answers go out as one message. */
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** One turn's preview and final delivery. */
export class LiveReply {
  /** Renders the current view; called only when a preview is due, never per event. */
  private view: (() => string) | undefined;
  private dirty = false;
  private shown = "";
  private messageId: number | undefined;
  private lastShownAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private finished = false;

  constructor(private readonly options: LiveReplyOptions) {}

  private get useDraft(): boolean {
    return this.options.draft?.support.enabled === true && this.messageId === undefined;
  }

  /** The preview changed; `view` renders it (≤ 4096 visible chars) when the rate allows a send. */
  show(view: () => string): void {
    if (this.finished) return;
    this.view = view;
    this.dirty = true;
    this.schedule();
  }

  private schedule(): void {
    if (this.timer || this.inFlight || this.finished || !this.dirty) return;
    const delay =
      this.lastShownAt === 0
        ? this.options.timing.firstPreviewMs
        : this.lastShownAt + this.options.timing.intervalMs - Date.now();
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.flush();
      },
      Math.max(0, delay),
    );
  }

  private flush(): void {
    if (this.finished || !this.dirty || !this.view) return;
    this.dirty = false;
    const html = this.view();
    if (html === "" || html === this.shown) return;
    this.inFlight = this.deliver(html)
      .catch((error: unknown) =>
        this.options.logger.warn({ err: errorText(error) }, "telegram preview failed"),
      )
      .finally(() => {
        this.inFlight = undefined;
        this.lastShownAt = Date.now();
        this.schedule();
      });
  }

  private async deliver(html: string): Promise<void> {
    const { sender, draft } = this.options;
    if (draft && this.useDraft) {
      try {
        await sender.draft(draft.id, html);
        this.shown = html;
        return;
      } catch (error) {
        if (!isUnsupported(error)) throw error;
        this.options.logger.info(
          { err: errorText(error) },
          "sendMessageDraft unsupported; previews use edits",
        );
        draft.support.enabled = false;
      }
    }
    if (this.messageId === undefined) {
      this.messageId = await sender.send(html, { reply: true, replyMarkup: STOP_KEYBOARD });
    } else if ((await sender.edit(this.messageId, html, STOP_KEYBOARD)) === "gone") {
      this.messageId = await sender.send(html, { replyMarkup: STOP_KEYBOARD });
    }
    this.shown = html;
  }

  /**
   * Deliver the answer (already split into chunks) exactly once: the preview message becomes the
   * first chunk, the rest follow as new messages; the last one carries `markup` if given. Later
   * calls do nothing.
   */
  async finish(chunks: readonly string[], markup?: InlineKeyboardMarkup): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.inFlight;
    const { sender, timing } = this.options;
    let rest = chunks;
    const [first, ...others] = chunks;
    if (this.messageId !== undefined && first !== undefined) {
      await sleep(this.lastShownAt + timing.intervalMs - Date.now());
      const firstMarkup = others.length === 0 ? markup : undefined;
      if ((await sender.edit(this.messageId, first, firstMarkup)) !== "gone") rest = others;
    }
    await sender.sendAll(rest, { reply: rest === chunks, ...(markup ? { lastMarkup: markup } : {}) });
  }
}
