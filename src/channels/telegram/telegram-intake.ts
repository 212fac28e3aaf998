/**
 * Telegram intake screening: every update is checked before any other middleware (the per-chat
 * ordering reads `message.chat.id`, the handlers read the sender and the callback's message), so
 * a malformed update can never throw in the middleware chain. An update passes when it carries
 * one of the kinds the bot asks for and that part has the fields the handlers use; anything else
 * is dropped and logged once with its kind — a malformed button press is still answered ("this
 * button is no longer active") when it has a query id, so the person's client stops waiting. A
 * message the screen read (also an edited message or channel post) is kept with its update, so the
 * handlers do not read it again.
 * Polling results are screened too: entries that are not updates at all are dropped before the
 * runner computes its next offset from them.
 */
import type { Context, MiddlewareFn } from "grammy";
import { z } from "zod";
import { INACTIVE_BUTTON, type IntakeLog } from "../intake-log.js";
import { parseTelegramMessage, type TelegramMessage, telegramMessageSchema } from "./telegram-inbound.js";

const userSchema = z.looseObject({ id: z.number().int(), first_name: z.string().optional() });
const chatSchema = z.looseObject({ id: z.number().int(), type: z.string().optional() });

const callbackQuerySchema = z.looseObject({
  id: z.string().min(1),
  from: userSchema.extend({ first_name: z.string(), is_bot: z.boolean().optional() }),
  data: z.string().optional(),
  message: z
    .looseObject({
      message_id: z.number().int(),
      chat: chatSchema,
      message_thread_id: z.number().int().optional(),
      is_topic_message: z.boolean().optional(),
    })
    .optional(),
});

const myChatMemberSchema = z.looseObject({
  chat: chatSchema,
  new_chat_member: z.looseObject({ user: userSchema, status: z.string() }),
});

const stoppedGenerationSchema = z.looseObject({
  chat: chatSchema.extend({ username: z.string().optional(), first_name: z.string().optional() }),
  message_thread_id: z.number().int().optional(),
});

/**
 * The update kinds the bot handles, each with the schema its handler relies on. Looked up by
 * own key only (Object.hasOwn): an update's keys come from the network, and `in` would also
 * find inherited names such as `constructor`, `toString` or `__proto__`.
 */
const KIND_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  message: telegramMessageSchema,
  channel_post: telegramMessageSchema,
  edited_message: telegramMessageSchema,
  edited_channel_post: telegramMessageSchema,
  callback_query: callbackQuerySchema,
  my_chat_member: myChatMemberSchema,
  stopped_message_generation: stoppedGenerationSchema,
};

export type UpdateScreening =
  | { readonly pass: true }
  | { readonly pass: false; readonly kind: string; readonly callbackQueryId?: string };

const MESSAGE_KINDS: ReadonlySet<string> = new Set([
  "message",
  "channel_post",
  "edited_message",
  "edited_channel_post",
]);

/** The verdict on an update, and the message (or channel post) it carries as read. */
function read(update: unknown): { readonly verdict: UpdateScreening; readonly message?: TelegramMessage } {
  if (typeof update !== "object" || update === null || Array.isArray(update))
    return { verdict: { pass: false, kind: "malformed_update" } };
  const record = update as Record<string, unknown>;
  if (!Number.isSafeInteger(record.update_id)) return { verdict: { pass: false, kind: "malformed_update" } };
  const kinds = Object.keys(record).filter((key) => Object.hasOwn(KIND_SCHEMAS, key));
  if (kinds.length !== 1)
    return { verdict: { pass: false, kind: kinds.length === 0 ? "unhandled_update" : "malformed_update" } };
  const kind = kinds[0] as string;
  const parsed = MESSAGE_KINDS.has(kind)
    ? parseTelegramMessage(record[kind])
    : (KIND_SCHEMAS[kind] as z.ZodType).safeParse(record[kind]);
  if (parsed.success)
    return MESSAGE_KINDS.has(kind)
      ? { verdict: { pass: true }, message: parsed.data as TelegramMessage }
      : { verdict: { pass: true } };
  const queryId = kind === "callback_query" ? (record[kind] as { id?: unknown } | null)?.id : undefined;
  return typeof queryId === "string" && queryId.length > 0 && queryId.length <= 200
    ? { verdict: { pass: false, kind: `malformed_${kind}`, callbackQueryId: queryId } }
    : { verdict: { pass: false, kind: `malformed_${kind}` } };
}

/** Screen one update (pure and total: any value in, a verdict out). */
export function screenUpdate(update: unknown): UpdateScreening {
  return read(update).verdict;
}

/** Messages and channel posts as the screen read them, by their update. */
const readMessages = new WeakMap<object, TelegramMessage>();

/** The message or channel post of an update the screen passed, as it read it. */
export function screenedMessage(update: object): TelegramMessage | undefined {
  return readMessages.get(update);
}

/** The first middleware: only updates that pass go further (as next's own promise, no wrapper). */
export function intakeScreen(log: IntakeLog): MiddlewareFn<Context> {
  return (ctx, next) => {
    const { verdict, message } = read(ctx.update);
    if (message) readMessages.set(ctx.update, message);
    return verdict.pass ? next() : refuse(ctx, verdict, log);
  };
}

/** Log a refused update; a button press is still answered, so the person's client stops waiting. */
async function refuse(
  ctx: Context,
  verdict: Extract<UpdateScreening, { pass: false }>,
  log: IntakeLog,
): Promise<void> {
  log.refused(verdict.kind, { transport: "telegram" });
  if (verdict.callbackQueryId !== undefined)
    await ctx.api
      .answerCallbackQuery(verdict.callbackQueryId, { text: INACTIVE_BUTTON })
      .catch((error: unknown) => log.refused("callback_answer_failed", { err: String(error) }));
}

/** A getUpdates result entry the runner can take an offset from: an object with an update id. */
function isUpdateLike(entry: unknown): boolean {
  return (
    typeof entry === "object" &&
    entry !== null &&
    Number.isSafeInteger((entry as { update_id?: unknown }).update_id)
  );
}

/**
 * A getUpdates answer without its entries that are not updates (logged once each): the polling
 * receiver's look at each answer (telegram-polling.ts) runs it, before the runner reads the answer.
 */
export function screenPolled<R extends { ok: boolean; result?: unknown }>(result: R, log: IntakeLog): R {
  if (!result.ok) return result;
  const entries: unknown = result.result;
  if (!Array.isArray(entries)) {
    log.refused("malformed_updates", { transport: "telegram" });
    return { ...result, result: [] as never };
  }
  const kept = entries.filter(isUpdateLike);
  for (let i = kept.length; i < entries.length; i++)
    log.refused("malformed_update", { transport: "telegram" });
  return kept.length === entries.length ? result : { ...result, result: kept as never };
}
