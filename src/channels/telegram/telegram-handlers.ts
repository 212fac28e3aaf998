/**
 * The update handlers: a message, a channel post, an edit of either, the bot's removal from a chat;
 * button presses and the draft stop button are handled in telegram-presses.ts. A message addressed
 * to the bot by someone who may use it (telegram-admission.ts) is an access command, answered at
 * once (telegram-access-commands.ts), or goes through its sender's hand-over lane: a service
 * command or a message (telegram-lane-routing.ts), an album once it has closed
 * (telegram-album-hand-over.ts). Each handler returns once that is done — `service.receive()` /
 * `press()` / `command()` resolve once recorded, never when a turn ends, and a message's files are
 * downloaded and read in its sender's lane afterwards (telegram-hand-over.ts) — so the per-chat
 * ordering around them never holds a chat for a whole turn or for one person's slow file, and an
 * approval press is never stuck behind the turn waiting for it. An anonymous admin's message and a
 * linked channel's post copied into its discussion group are no person's: they run nothing. Every
 * group and channel message (addressed to the bot or not), its edits, and the bot's removal from a
 * chat are also reported to the optional observers (channel subscriptions), under the chat's
 * session id (a supergroup's former group, as sessions and access see it); what starts a turn is
 * unchanged by them, and an edit starts nothing.
 */
import type { Context, MiddlewareFn } from "grammy";
import type { ObservedChange } from "../../subscriptions/observed-change.js";
import type { ObservedMessage } from "../../subscriptions/observed-message.js";
import { answerAccessCommand, type AccessCommandDeps, isAccessCommand } from "./telegram-access-commands.js";
import { admit } from "./telegram-admission.js";
import { type AlbumDeps, gather } from "./telegram-album-hand-over.js";
import { errorText } from "./telegram-errors.js";
import {
  commandOf,
  isAddressedToBot,
  isAnonymousAdmin,
  isAutomaticForward,
  type TelegramMessage,
  targetOf,
  telegramMessageSchema,
} from "./telegram-inbound.js";
import { screenedMessage } from "./telegram-intake.js";
import { routeToLane } from "./telegram-lane-routing.js";
import { followMigration, sessionChatOf } from "./telegram-migrated-chats.js";
import {
  editOf,
  isObserved,
  leftChatOf,
  observedOf,
  type RemovedChat,
  removedChatOf,
} from "./telegram-observe.js";
import { onCallback, onStopGeneration } from "./telegram-presses.js";

/** The command menu registered with setMyCommands. */
export const COMMAND_MENU = [
  { command: "start", description: "What this bot is and how to get access" },
  { command: "new", description: "Start a fresh session here" },
  { command: "stop", description: "Stop the running turn" },
  { command: "mode", description: "Permission mode: /mode <mode>" },
  { command: "model", description: "Switch the model: /model <name>" },
  { command: "status", description: "Session, mode, model and usage" },
  { command: "grants", description: "List or revoke standing grants" },
  { command: "reviewer", description: "Safety reviewer statistics" },
  { command: "skills", description: "List skills; approvers: /skills enable|disable <name>" },
  { command: "skill", description: "Run a skill: /skill <name> [text]" },
  { command: "schedules", description: "Your scheduled tasks and wake-ups, with Cancel buttons" },
  { command: "subscriptions", description: "Your channel subscriptions, with Cancel buttons" },
] as const;

/** What the handlers need: what each kind of message's handling needs, and the observers. */
export interface HandlerDeps extends AlbumDeps, AccessCommandDeps {
  /** Told about every group, supergroup and channel message seen (channel subscriptions). */
  readonly observe?: ((message: ObservedMessage) => Promise<unknown> | undefined) | undefined;
  /** Told about every edit of a group, supergroup or channel message seen (channel subscriptions). */
  readonly observeChange?: ((change: ObservedChange) => Promise<unknown> | undefined) | undefined;
  /** Told when the bot left or was removed from a chat. */
  readonly onBotRemoved?: ((chat: RemovedChat) => void) | undefined;
}

function readMessage(ctx: Context, raw: unknown, deps: HandlerDeps): TelegramMessage | undefined {
  const screened = screenedMessage(ctx.update);
  if (screened) return screened;
  const parsed = telegramMessageSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  deps.logger.warn(
    { updateId: ctx.update.update_id, issues: parsed.error.issues.length },
    "telegram: unreadable message",
  );
  return undefined;
}

/**
 * Report a group or channel message to the observer, under its chat's session id; its failures
 * are logged, never passed on.
 */
async function report(message: TelegramMessage, deps: HandlerDeps): Promise<void> {
  if (!deps.observe) return;
  try {
    const observed = observedOf(message, deps.bot(), await sessionChatOf(message.chat, deps.migrations));
    if (observed) await deps.observe(observed);
  } catch (error) {
    deps.logger.warn({ err: errorText(error), chatId: message.chat.id }, "telegram: observing failed");
  }
}

/** A message's handling: act's own promise, and no layer of its own (an async function's) around it. */
function onMessage(ctx: Context, deps: HandlerDeps): Promise<void> | undefined {
  const message = readMessage(ctx, ctx.message, deps);
  if (!message) return undefined;
  // Only a group's upgrade notice is followed (an await, a loop tick, spared the others).
  const upgrade = message.migrate_from_chat_id !== undefined || message.migrate_to_chat_id !== undefined;
  if (upgrade)
    return followMigration(message, deps.migrations).then((followed) =>
      followed ? undefined : actAndReport(ctx, message, deps),
    );
  return actAndReport(ctx, message, deps);
}

/**
 * Act on `message` and report it to the observer, if any and if it is one observed (a person's
 * chat with the bot never is): settles once both are done.
 */
function actAndReport(ctx: Context, message: TelegramMessage, deps: HandlerDeps): Promise<void> {
  if (!deps.observe || !isObserved(message, deps.bot())) return act(ctx, message, deps);
  const reporting = report(message, deps);
  return act(ctx, message, deps).finally(() => reporting);
}

/**
 * An anonymous admin's message runs nothing (no turn, no command): nobody can be authorised or
 * held to account as the group. When it addresses the bot, the chat is told why, once an hour.
 */
async function answerAnonymousAdmin(message: TelegramMessage, deps: HandlerDeps): Promise<void> {
  if (!isAddressedToBot(message, deps.bot())) return;
  const note = await deps.access.anonymousNote(message.chat);
  deps.logger.info(
    { chatId: message.chat.id, told: note !== undefined },
    "telegram: anonymous admin refused",
  );
  if (note) await deps.outputFor(targetOf(message)).postText(note);
}

/** What `act` hands back for a message it is done with at once. */
const ACTED: Promise<void> = Promise.resolve();

/**
 * Run what `message` asks for, if its sender may: one `then` on the admission (an async function
 * here cost its own promise and one per await).
 */
function act(ctx: Context, message: TelegramMessage, deps: HandlerDeps): Promise<void> {
  const from = message.from;
  if (message.chat.type !== "channel" && isAnonymousAdmin(message))
    return answerAnonymousAdmin(message, deps);
  // A linked channel's post copied into its discussion group is no person's: it runs nothing.
  if (isAutomaticForward(message)) {
    deps.logger.debug({ chatId: message.chat.id }, "telegram: automatic forward ignored");
    return ACTED;
  }
  if (!from || from.is_bot || message.chat.type === "channel") return ACTED;
  const delivered = { message, updateId: ctx.update.update_id };
  if (message.media_group_id !== undefined) {
    gather(ctx.update, delivered, message.media_group_id, deps);
    return ACTED;
  }
  const bot = deps.bot();
  if (!isAddressedToBot(message, bot)) return ACTED;
  const command = commandOf(message, bot);
  return admit(message, deps, command?.name).then((admitted) => {
    if (!admitted) return;
    if (command && isAccessCommand(command.name))
      return answerAccessCommand(delivered, command, admitted.user, admitted.tell, deps);
    return routeToLane(ctx.update, delivered, command, admitted, deps);
  });
}

async function onChannelPost(ctx: Context, deps: HandlerDeps): Promise<void> {
  const message = readMessage(ctx, ctx.channelPost, deps);
  if (message) await report(message, deps);
}

/**
 * An edited message or channel post: reported to the observer (subscriptions revise their copy),
 * under its chat's session id; never acted on (the edit of a command or a question runs nothing
 * again). Its failures are logged, never passed on.
 */
async function onEdit(ctx: Context, raw: unknown, deps: HandlerDeps): Promise<void> {
  if (!deps.observeChange) return;
  const message = readMessage(ctx, raw, deps);
  if (!message) return;
  try {
    const edit = editOf(message, deps.bot(), await sessionChatOf(message.chat, deps.migrations));
    if (edit) await deps.observeChange(edit);
  } catch (error) {
    deps.logger.warn(
      { err: errorText(error), chatId: message.chat.id },
      "telegram: observing an edit failed",
    );
  }
}

async function onMyChatMember(ctx: Context, deps: HandlerDeps): Promise<void> {
  const left = leftChatOf(ctx.update.my_chat_member, deps.bot());
  if (!left) return;
  deps.logger.info({ chatId: left.id }, "telegram: the bot was removed from a chat");
  if (deps.onBotRemoved) deps.onBotRemoved(removedChatOf(await sessionChatOf(left, deps.migrations)));
}

/**
 * The handlers as one grammY middleware: an update goes to its kind's handler (as grammY's `on`
 * filters match it: the update has that field), and an update of no kind handled here goes on. A
 * Composer with an `on` per kind made every update pass a layer of middleware per kind.
 */
export function telegramHandlers(deps: HandlerDeps): MiddlewareFn<Context> {
  return (ctx, next) => {
    const { update } = ctx;
    if (update.message) return onMessage(ctx, deps);
    if (update.channel_post) return onChannelPost(ctx, deps);
    if (update.edited_message) return onEdit(ctx, update.edited_message, deps);
    if (update.edited_channel_post) return onEdit(ctx, update.edited_channel_post, deps);
    if (update.my_chat_member) return onMyChatMember(ctx, deps);
    if (update.callback_query) return onCallback(ctx, deps);
    if (update.stopped_message_generation) return onStopGeneration(ctx, deps);
    return next();
  };
}

/** Updates the bot asks Telegram for. */
export const ALLOWED_UPDATES = [
  "message",
  "channel_post",
  "edited_message",
  "edited_channel_post",
  "my_chat_member",
  "callback_query",
  "stopped_message_generation",
] as const;
