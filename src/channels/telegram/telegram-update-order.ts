/**
 * The order the Telegram channel handles updates in, as grammY middleware: a message is handled
 * after the one before it in its chat and topic has been (whether that succeeded or failed: each
 * failure goes to its own update's handling), and anything else — a button press, a stop — at
 * once, never queued behind messages. What @grammyjs/runner's `sequentialize` did for one key per
 * update, with one promise per message where it took about nine (its queue per key, a
 * Promise.all of the keys, two async functions), and no queue kept for a chat with nothing in it.
 */
import type { Context, MiddlewareFn } from "grammy";

/**
 * The chat and topic of a message's update (or of an edit of one: it goes after the message it
 * edits, were both in one batch); undefined for any other update.
 */
function orderKey(ctx: Context): string | undefined {
  const message = ctx.message ?? ctx.editedMessage;
  if (!message) return undefined;
  const topic = message.is_topic_message ? message.message_thread_id : undefined;
  return `${message.chat.id}:${topic ?? "-"}`;
}

/** Middleware running the rest of the chain for each update in its chat's order (see module comment). */
export function inUpdateOrder(): MiddlewareFn<Context> {
  /** Per chat and topic, the handling of its last message: settled (never rejected) once it is done. */
  const last = new Map<string, Promise<void>>();
  const forget = (key: string, done: Promise<void>): void => {
    if (last.get(key) === done) last.delete(key);
  };
  return (ctx, next) => {
    const key = orderKey(ctx);
    if (key === undefined) return next();
    const before = last.get(key);
    const handled = before === undefined ? next() : before.then(() => next());
    const done: Promise<void> = handled.then(
      () => forget(key, done),
      () => forget(key, done),
    );
    last.set(key, done);
    return handled;
  };
}
