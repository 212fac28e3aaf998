/**
 * Webhook mode answers Telegram only once an update's message has been handed over: Telegram
 * never re-sends an update it got a 200 for, so answering while the message still waits in its
 * sender's hand-over lane (telegram-hand-over.ts) would lose it to a crash in that window. The
 * handlers note each update's hand-over here, and the middleware, placed before the per-chat
 * ordering, waits for it after the handlers have returned — the chat's ordered section is not held
 * by it. The webhook's own deadline (telegram-webhook.ts answerWithinMs) still bounds the answer.
 * Long polling confirms updates as it fetches them, so it installs no wait.
 */
import type { Context, MiddlewareFn } from "grammy";
import type { Update } from "grammy/types";

/** The hand-overs updates wait for (see module comment). */
export class HandOverWaits {
  private readonly waits = new WeakMap<Update, Promise<void>>();

  /** `update`'s message is handed over once `handedOver` settles. */
  note(update: Update, handedOver: Promise<void>): void {
    this.waits.set(update, handedOver);
  }

  /** Runs the handlers, then waits for the hand-over they noted for the update, if any. */
  middleware(): MiddlewareFn<Context> {
    return async (ctx, next) => {
      await next();
      await this.waits.get(ctx.update);
    };
  }
}
