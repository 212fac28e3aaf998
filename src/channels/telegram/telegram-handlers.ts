/**
 * The update handlers: messages, channel posts and the bot's removal from a chat; button presses
 * and the draft stop button are handled in telegram-presses.ts. Each checks access,
 * records or hands over, and returns — `service.receive()` / `press()` / `command()` resolve once
 * recorded, never when a turn ends, and a message's files are downloaded and read in its sender's
 * hand-over lane afterwards (telegram-hand-over.ts) — so the per-chat ordering around them never
 * holds a chat for a whole turn or for one person's slow file, and an approval press is never
 * stuck behind the turn waiting for it. A command is answered at once, unless its sender's lane
 * is busy and it may change what their earlier message meets (/new, /mode, …): then it waits
 * there (hand-over-lanes.ts route); their /stop cancels their lane (its commands spared), and they
 * are told what it dropped, never a message handed over elsewhere that Telegram delivered again:
 * each drop is claimed first in the session layer's record of deliveries, where a message's
 * hand-over and a service command's run claim their update too (telegram-hand-over.ts
 * claimDelivery), so a service command, /stop included, runs once per update and never fails in
 * silence (telegram-command-runs.ts), as do /start, /pair, /pairs and /unpair, answered here on
 * the bot's access. When the channel stops before a message (an album, a
 * command waiting behind one) is handed over, it is dropped, and its sender is told to send it
 * again (hand-over-lanes.ts drain) when Telegram will not deliver it again: polling confirmed its
 * update as it fetched it, and a webhook update may have been answered at the webhook's deadline.
 * A webhook update the stop left unanswered (the receiver's `redelivers`) comes again, to the next
 * process behind the URL: its sender is not told, or their resend would be a second turn. Each
 * update's hand-over is noted (telegram-hand-over-waits.ts), so webhook mode answers once it is
 * recorded.
 * An album's items are gathered first (telegram-albums.ts) and handed over as one message, every
 * item's update noted with it; one that finds its sender's lane full is refused aloud once it has
 * closed. Every group and channel message
 * (addressed to the bot or not) and the bot's removal from a chat are also reported to the
 * optional observers (channel subscriptions), under the chat's session id (a supergroup's former
 * group, as sessions and access see it); what starts a turn is unchanged by them.
 */
import { Composer, type Context } from "grammy";
import type { ThreadOutput } from "../../core/thread-output.js";
import type { ThreadTarget } from "../../core/thread-target.js";
import type { TelegramAccess } from "./telegram-access.js";
import type { ChatMigrations } from "./telegram-migrations.js";
import type { ObservedMessage } from "../../subscriptions/observed-message.js";
import { errorText } from "./telegram-errors.js";
import { COMMAND_NAMES } from "../../core/text-commands.js";
import { type AlbumCollector, albumKey } from "./telegram-albums.js";
import { claimDelivery, type Delivered, type HandOverDeps, handOver, laneOf } from "./telegram-hand-over.js";
import type { HandOverWaits } from "./telegram-hand-over-waits.js";
import { replyOf, runOnce } from "./telegram-command-runs.js";
import { droppedNote, LANE_FULL, type LaneEntry, type Routed } from "../shared/hand-over-lanes.js";
import type { LanePosition } from "../shared/lane-stop-marks.js";
import {
  commandOf,
  isAddressedToBot,
  isAnonymousAdmin,
  isAutomaticForward,
  type TelegramMessage,
  targetOf,
  telegramMessageSchema,
  userOf,
} from "./telegram-inbound.js";
import { screenedMessage } from "./telegram-intake.js";
import { accessChatOf, followMigration, sessionChatOf } from "./telegram-migrated-chats.js";
import { leftChatOf, observedOf, type RemovedChat, removedChatOf } from "./telegram-observe.js";
import { onCallback, onStopGeneration } from "./telegram-presses.js";

/** Commands passed to `service.command()`; /start, /pair, /pairs and /unpair are answered here. */
const SERVICE_COMMANDS: ReadonlySet<string> = new Set([
  ...COMMAND_NAMES,
  // Contributed by other modules (subscriptions, schedules, skills).
  "subscriptions",
  "unsubscribe",
  "schedules",
  "cancel_task",
  "skills",
  "skill",
]);

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

export interface HandlerDeps extends HandOverDeps {
  readonly access: TelegramAccess;
  /** Groups upgraded to supergroups: their sessions and access carry over. */
  readonly migrations: ChatMigrations;
  /** Album items waiting for the rest of their album. */
  readonly albums: AlbumCollector<Delivered>;
  /** Where each update's hand-over is noted, for webhook mode to answer after it. */
  readonly waits: HandOverWaits;
  /** Whether Telegram delivers update `updateId` again after the channel stopped (see module comment). */
  readonly redelivers: (updateId: number) => boolean;
  readonly outputFor: (target: ThreadTarget) => ThreadOutput;
  /** Told about every group, supergroup and channel message seen (channel subscriptions). */
  readonly observe?: ((message: ObservedMessage) => Promise<unknown> | undefined) | undefined;
  /** Told when the bot left or was removed from a chat. */
  readonly onBotRemoved?: ((chat: RemovedChat) => void) | undefined;
}

const INTRODUCTION =
  "I am Coworker, an AI agent that can use tools (files, shell, web) in this chat, asking before risky steps.";

/** The answer to /start for someone who may use the bot; an admin also learns the pairing commands. */
function startText(userId: number, admin: boolean): string {
  return (
    `${INTRODUCTION}\n\n` +
    `Your Telegram user id is ${userId}. You have access: write to me here, or mention me in a group.\n\n` +
    "Commands: /new, /stop, /mode, /model, /status, /grants, /skills, /skill." +
    (admin
      ? "\n\nAs an allowed user you approve others: /pair <code> (the code in their refusal), " +
        "/pairs lists pairings, /unpair <user id> ends one. A pairing lasts while its approver stays allowed."
      : "")
  );
}

/** The commands answered here, on the bot's access (telegram-access.ts), not by the session layer. */
const ACCESS_COMMANDS: ReadonlySet<string> = new Set(["start", "pair", "pairs", "unpair"]);

/** The answer to access command `name` (ACCESS_COMMANDS) from `user`, who may use the bot. */
async function accessReply(
  name: string,
  args: readonly string[],
  message: TelegramMessage,
  user: { id: number; name: string },
  deps: HandlerDeps,
): Promise<string> {
  if (name === "start") return startText(user.id, deps.access.isAdmin(user.id));
  if (name === "pair") return deps.access.approve(user, args[0]);
  // The list names every paired account and its approver: not for a group's other members.
  if (message.chat.type !== "private") return `Send /${name} to me in a private chat.`;
  if (name === "pairs") return deps.access.list(user);
  return deps.access.unpair(user, args[0]);
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

async function onMessage(ctx: Context, deps: HandlerDeps): Promise<void> {
  const message = readMessage(ctx, ctx.message, deps);
  if (!message) return;
  if (await followMigration(message, deps.migrations)) return;
  const reporting = report(message, deps);
  try {
    await act(ctx, message, deps);
  } finally {
    await reporting;
  }
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

async function act(ctx: Context, message: TelegramMessage, deps: HandlerDeps): Promise<void> {
  const from = message.from;
  if (message.chat.type !== "channel" && isAnonymousAdmin(message))
    return answerAnonymousAdmin(message, deps);
  // A linked channel's post copied into its discussion group is no person's: it runs nothing.
  if (isAutomaticForward(message)) {
    deps.logger.debug({ chatId: message.chat.id }, "telegram: automatic forward ignored");
    return;
  }
  if (!from || from.is_bot || message.chat.type === "channel") return;
  const delivered = { message, updateId: ctx.update.update_id };
  if (message.media_group_id !== undefined) return gather(ctx, delivered, message.media_group_id, deps);
  const bot = deps.bot();
  if (!isAddressedToBot(message, bot)) return;
  const command = commandOf(message, bot);
  const admitted = await admit(message, deps, command?.name);
  if (!admitted) return;
  const { target, tell } = admitted;
  if (command && ACCESS_COMMANDS.has(command.name)) {
    const { name, args } = command;
    const answer = () => accessReply(name, args, message, admitted.user, deps);
    await runOnce(delivered, name, async () => tell(await replyOf(name, answer, deps)), tell, deps);
    return;
  }
  const lane = laneOf(message);
  const routed =
    command && SERVICE_COMMANDS.has(command.name)
      ? await routeCommand(lane, delivered, command, target, tell, deps)
      : await deps.lanes.route(lane, messageEntry(delivered, target, tell, deps));
  if (routed.kind === "queued") deps.waits.note(ctx.update, routed.handedOver);
  if (routed.kind !== "full") return;
  deps.logger.info({ lane }, "telegram: hand-over lane full");
  await tell(LANE_FULL);
}

/**
 * Where a message stands in its sender's lane (lane-stop-marks.ts LanePosition): its message_id,
 * which Telegram numbers upwards within a chat, forum topics sharing the chat's one sequence; a
 * lane is one sender in one chat (and topic: laneOf), so later messages there have larger ids.
 * Only new messages are routed (edits and channel posts never reach a lane), and an album's first
 * item stands for it: its items' ids follow each other, all before a stop sent after it.
 */
function positionOf(delivered: Delivered): LanePosition {
  return delivered.message.message_id;
}

/** A message (no service command) as its sender's lane routes it: handed over with its files. */
function messageEntry(
  delivered: Delivered,
  target: ThreadTarget,
  tell: (text: string) => Promise<void>,
  deps: HandlerDeps,
): LaneEntry {
  return {
    kind: "message",
    handOver: (signal) => handOver([delivered], target, deps, tell, signal),
    tell,
    redelivered: () => deps.redelivers(delivered.updateId),
    claimDrop: () => claimDelivery([delivered], deps),
    position: positionOf(delivered),
  };
}

/**
 * Route a service command through its sender's lane `lane`, claimed where it runs (runOnce): a
 * /stop at once, before it cancels the lane — a stop never waits behind what the sender sent
 * before it, and one delivered again cancels nothing — answered with what it dropped; any other
 * command when the lane hands it over, at once or in its turn, so one a stopping channel drops
 * is left for its update's redelivery.
 */
async function routeCommand(
  lane: string,
  delivered: Delivered,
  command: { readonly name: string; readonly args: readonly string[] },
  target: ThreadTarget,
  tell: (text: string) => Promise<void>,
  deps: HandlerDeps,
): Promise<Routed> {
  const { name } = command;
  const once = <Result>(run: () => Promise<Result>) => runOnce(delivered, name, run, tell, deps);
  const reply = () =>
    replyOf(
      name,
      () => deps.service.command(target, userOf(delivered.message.from!), name, command.args),
      deps,
    );
  const position = positionOf(delivered);
  if (name === "stop") {
    const stop: LaneEntry = {
      kind: "stop",
      answer: async (dropped) => {
        const text = await reply();
        return tell(dropped > 0 ? `${text}\n\n${droppedNote(dropped)}` : text);
      },
      position,
    };
    return (await once(() => deps.lanes.route(lane, stop))) ?? { kind: "answered" };
  }
  return deps.lanes.route(lane, {
    kind: "command",
    name,
    handOver: () => once(async () => tell(await reply())),
    tell,
    redelivered: () => deps.redelivers(delivered.updateId),
    // Claimed as its run would be: a redelivery of its update (to any process) is dropped untold.
    claimDrop: () => claimDelivery([delivered], deps),
    position,
  });
}

/**
 * Whether the sender may use the bot in the message's chat: its session target and a way to
 * answer there when so; a stranger gets the one refusal an hour instead.
 */
async function admit(
  message: TelegramMessage,
  deps: HandlerDeps,
  command?: string,
): Promise<
  | { target: ThreadTarget; tell: (text: string) => Promise<void>; user: { id: number; name: string } }
  | undefined
> {
  const from = message.from!;
  // A supergroup that was a group continues the group's session, and is allowed where it was.
  const chat = await accessChatOf(message.chat, deps.migrations);
  const target = targetOf(message, chat.alsoKnownAs);
  // The thread output is only needed to answer here (most messages just start a turn).
  const tell = (text: string) => deps.outputFor(target).postText(text);
  const user = { id: from.id, name: userOf(from).name };
  if (await deps.access.allows(chat, user)) return { target, tell, user };
  // Whatever a stranger sends (/start and /pair included) gets the one refusal an hour: never a
  // reply per message, which would let anyone spend the bot's send rate.
  const refusal = await deps.access.refusal(chat, user);
  deps.logger.info(
    { userId: from.id, chatId: message.chat.id, told: refusal !== undefined },
    "telegram: refused",
  );
  if (refusal) await tell(command === "start" ? `${INTRODUCTION}\n\n${refusal}` : refusal);
  return undefined;
}

/**
 * An album's item: the first reserves its sender's place in their lane, which waits for the
 * album to close and hands it over as one message when any item addresses the bot — answered on
 * the captioned item (the first when none is). Every item's update is noted with that hand-over,
 * so webhook mode answers each once the album is recorded. When the lane is full, the album is
 * still waited for, and a sender who may use the bot is told it was not taken, as for any message;
 * so are they when the channel stops before the album is handed over, unless Telegram delivers
 * every item of it again (its first alone while it is still open).
 */
function gather(ctx: Context, delivered: Delivered, group: string, deps: HandlerDeps): void {
  const key = albumKey({ ...delivered.message, media_group_id: group });
  const handedOver = deps.albums.add(key, delivered, (album) => handOverAlbum(album, delivered, deps));
  if (handedOver) deps.waits.note(ctx.update, handedOver);
}

/** A closed album addressed to the bot, its sender admitted: its items, the answered one first. */
interface Ready {
  readonly admitted: NonNullable<Awaited<ReturnType<typeof admit>>>;
  readonly items: readonly [Delivered, ...Delivered[]];
}

/** Once the album `delivered` is the first item of has closed: ready to hand over, or nothing. */
async function readyAlbum(
  album: Promise<readonly Delivered[]>,
  delivered: Delivered,
  deps: HandlerDeps,
): Promise<Ready | undefined> {
  const items = await album;
  if (!items.some((item) => isAddressedToBot(item.message, deps.bot()))) return undefined;
  const main = items.find((item) => item.message.caption !== undefined) ?? delivered;
  const admitted = await admit(main.message, deps);
  return admitted && { admitted, items: [main, ...items.filter((item) => item !== main)] };
}

/**
 * Queue the album `delivered` is the first item of in its sender's lane (see gather); its closing
 * is read once, by whichever of the hand-over, the full lane's refusal or the stop's note asks first.
 */
function handOverAlbum(
  album: Promise<readonly Delivered[]>,
  delivered: Delivered,
  deps: HandlerDeps,
): Promise<void> | undefined {
  let closing: Promise<Ready | undefined> | undefined;
  const closed = () => {
    closing ??= readyAlbum(album, delivered, deps);
    return closing;
  };
  let items: readonly Delivered[] = [delivered];
  void album.then((all) => {
    items = all;
  });
  const queued = deps.lanes.enqueue(
    laneOf(delivered.message),
    async (signal) => {
      const ready = await closed();
      if (ready) await handOver(ready.items, ready.admitted.target, deps, ready.admitted.tell, signal);
    },
    {
      tell: async (text) => (await closed())?.admitted.tell(text),
      redelivered: () => items.every((item) => deps.redelivers(item.updateId)),
      claimDrop: () => claimDelivery(items, deps),
      position: positionOf(delivered),
    },
  );
  if (queued) return queued;
  deps.logger.info({ chatId: delivered.message.chat.id }, "telegram: hand-over lane full, album refused");
  void closed()
    .then((ready) => ready?.admitted.tell(LANE_FULL))
    .catch((error: unknown) =>
      deps.logger.warn({ err: errorText(error) }, "telegram: album refusal could not be delivered"),
    );
  return undefined;
}

async function onChannelPost(ctx: Context, deps: HandlerDeps): Promise<void> {
  const message = readMessage(ctx, ctx.channelPost, deps);
  if (message) await report(message, deps);
}

async function onMyChatMember(ctx: Context, deps: HandlerDeps): Promise<void> {
  const left = leftChatOf(ctx.update.my_chat_member, deps.bot());
  if (!left) return;
  deps.logger.info({ chatId: left.id }, "telegram: the bot was removed from a chat");
  if (deps.onBotRemoved) deps.onBotRemoved(removedChatOf(await sessionChatOf(left, deps.migrations)));
}

/** The handlers as one grammY middleware tree. */
export function telegramHandlers(deps: HandlerDeps): Composer<Context> {
  const composer = new Composer<Context>();
  composer.on("message", (ctx) => onMessage(ctx, deps));
  composer.on("channel_post", (ctx) => onChannelPost(ctx, deps));
  composer.on("my_chat_member", (ctx) => onMyChatMember(ctx, deps));
  composer.on("callback_query", (ctx) => onCallback(ctx, deps));
  composer.on("stopped_message_generation", (ctx) => onStopGeneration(ctx, deps));
  return composer;
}

/** Updates the bot asks Telegram for. */
export const ALLOWED_UPDATES = [
  "message",
  "channel_post",
  "my_chat_member",
  "callback_query",
  "stopped_message_generation",
] as const;
