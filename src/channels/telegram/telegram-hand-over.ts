/**
 * Handing a Telegram message to the session layer once access has been checked: its files are
 * downloaded and read (images, PDF text, transcripts: attachments/inbound-attachments.ts), the
 * person is told what could not be taken, and `service.receive()` records it. This slow part runs
 * in the sender's hand-over lane (channels/shared/hand-over-lanes.ts), after the per-chat ordered
 * section has returned: a slow file holds only its own sender's later messages in that chat (their
 * commands that change the session among them), never another person's, nor a stop. A lane
 * cancelled (the sender's stop, the channel stopping) hands nothing over. A sticker's emoji and a
 * shared location's coordinates are the message's words (telegram-inbound.ts standInText).
 *
 * An album arrives as several messages (telegram-albums.ts) and is handed over as one: every
 * item's file (at most the per-message file count, each through the upload gate), the items'
 * captions, and one dedupe key per item's update (dedupeKeyOf). A drop of a message, and a
 * command's run (/stop's and the access commands' too), claim the same keys (claimDelivery), so a
 * redelivery of one handed over elsewhere is dropped without telling its sender, and a command
 * runs once per update (telegram-command-runs.ts).
 *
 * The person's own text, and the record of what they forwarded: a forward's words are someone
 * else's, so they travel as a forwarded-text record naming their origin, which the engine shows in
 * a block they cannot close (core/attachment.ts), and the person's text is one line saying they
 * forwarded it — so a forward that writes its own "end of forward" and goes on in the forwarder's
 * voice never speaks for them, and the session layer never reads it as a typed command. An
 * inline bot's result sent through it is handed over the same way, naming the bot: its words are
 * the bot's, which the sender may not have seen before it was sent.
 */
import type { Logger } from "pino";
import { type AttachmentIntake, NO_FILES } from "../../attachments/inbound-attachments.js";
import { type ForwardedTextAttachment, fileNote } from "../../core/attachment.js";
import type { InboundFile } from "../../core/inbound-message.js";
import { isoTime } from "../../core/iso-time.js";
import type { ThreadTarget } from "../../core/thread-target.js";
import type { ConversationService } from "../../sessions/contracts.js";
import type { HandOverLanes, LaneSignal } from "../shared/hand-over-lanes.js";
import type { LanePosition } from "../shared/lane-stop-marks.js";
import { errorText } from "./telegram-errors.js";
import type { Downloaded, TelegramFiles } from "./telegram-files.js";
import {
  type BotIdentity,
  standInText,
  type TelegramMessage,
  textFor,
  topicOf,
  userOf,
} from "./telegram-inbound.js";
import { forwardedFrom } from "./telegram-word-origin.js";

export interface HandOverDeps {
  readonly service: ConversationService;
  readonly files: TelegramFiles;
  /** Turns saved files into model input (images, PDF text, transcripts, notes). */
  readonly attachments: AttachmentIntake;
  /** Where each sender's messages wait for their files, in order (see module comment). */
  readonly lanes: HandOverLanes;
  readonly bot: () => BotIdentity;
  readonly logger: Logger;
}

/** A message with the update it came in. */
export interface Delivered {
  readonly message: TelegramMessage;
  readonly updateId: number;
}

/** The hand-over lane of `message`'s sender in its chat and topic. */
export function laneOf(message: TelegramMessage): string {
  return `${message.chat.id}:${topicOf(message) ?? "-"}:${message.from?.id ?? "-"}`;
}

/**
 * Where a message stands in its sender's lane (lane-stop-marks.ts LanePosition): its message_id,
 * which Telegram numbers upwards within a chat, forum topics sharing the chat's one sequence; a
 * lane is one sender in one chat (and topic: laneOf), so later messages there have larger ids.
 * Only new messages are routed (edits and channel posts never reach a lane), and an album's first
 * item stands for it: its items' ids follow each other, all before a stop sent after it.
 */
export function positionOf(delivered: Delivered): LanePosition {
  return delivered.message.message_id;
}

/**
 * The id the session layer records `item`'s update under. A redelivered update keeps its
 * update_id, and a message reaches the bot in exactly one update (edits come as other kinds, which
 * start no turn): one key per message is enough. Update ids count per bot, so the key names the
 * bot: another bot's token on the same store (within the two days ids are remembered) would
 * otherwise have its first updates dropped.
 */
function dedupeKeyOf(item: Delivered, bot: BotIdentity): string {
  return `tg:${bot.id}:update:${item.updateId}`;
}

/**
 * Claim `items` in the session layer's record of deliveries, under the keys their hand-over
 * records (dedupeKeyOf): false when one was handed over, in any process, or claimed already — a
 * stop's drop told (hand-over-lanes.ts ClaimDrop), a command run. Rejects when it cannot say.
 */
export function claimDelivery(
  items: readonly Delivered[],
  deps: Pick<HandOverDeps, "service" | "bot">,
): Promise<boolean> {
  return deps.service.firstDelivery(items.map((item) => dedupeKeyOf(item, deps.bot())));
}

/** The line the forwarder's own text holds for a forward: ids only, no name anyone chose. */
export function forwardNote(source: string, withText: boolean): string {
  return `(forwarded a message from ${source}${withText ? " — see the forwarded-message block below" : ""})`;
}

/** The person's own text, and the record of what they forwarded (see module comment). */
function ownTextOf(
  message: TelegramMessage,
  text: string,
  withFiles: boolean,
): { text: string; forwarded?: ForwardedTextAttachment } {
  const from = forwardedFrom(message);
  if (!from || (text === "" && !withFiles)) return { text };
  const note = forwardNote(from.source, text !== "");
  if (text === "") return { text: note };
  return { text: note, forwarded: { kind: "forwarded-text", origin: from.origin, text } };
}

/** What a hand-over without a file downloads: nothing, and no note. */
const NOTHING_DOWNLOADED: Downloaded = Object.freeze({ files: Object.freeze([]), notes: Object.freeze([]) });

/** Download the items' files (at most the per-message count), with notes on those not saved. */
async function downloadAll(
  items: readonly Delivered[],
  target: ThreadTarget,
  deps: HandOverDeps,
): Promise<Downloaded> {
  const { kept, notes: overCount } = deps.attachments.limit(
    items.map((item) => item.message),
    (message) => deps.files.nameOf(message),
  );
  const files: InboundFile[] = [];
  const notes: string[] = [];
  for (const message of kept) {
    const downloaded = await deps.files.download(message, target);
    files.push(...downloaded.files);
    notes.push(...downloaded.notes);
  }
  return { files, notes: [...notes, ...overCount] };
}

/**
 * Hand over one message, or one album's items (the first is the one answered), to the session
 * layer: files downloaded and read, the person told about those not taken. Runs in a lane; once
 * the lane was cancelled (`signal`), nothing more is told nor handed over.
 */
export async function handOver(
  items: readonly [Delivered, ...Delivered[]],
  target: ThreadTarget,
  deps: HandOverDeps,
  tell: (text: string) => Promise<void>,
  signal: LaneSignal,
): Promise<void> {
  const [{ message }] = items;
  // Most messages bring no file: nothing to count or download. (Every item of an album brings one.)
  const downloaded = items.some((item) => deps.files.carriesFile(item.message))
    ? await downloadAll(items, target, deps)
    : NOTHING_DOWNLOADED;
  const { files } = downloaded;
  const words = items
    .map((item) => textFor(item.message, deps.bot()) || standInText(item.message))
    .filter((text) => text !== "")
    .join("\n\n");
  const { text, forwarded } = ownTextOf(message, words, files.length > 0);
  const intake =
    files.length === 0 ? NO_FILES : await deps.attachments.process(files, target, String(message.from!.id));
  if (!signal.handingOver()) {
    deps.logger.info({ updateIds: items.map((item) => item.updateId) }, "telegram: hand-over cancelled");
    return;
  }
  const notes = [...downloaded.notes, ...intake.notes];
  const told = [...notes, ...intake.hints];
  // Telling is best effort: the message still reaches the session layer, notes and all.
  if (told.length > 0)
    await tell(told.join("\n")).catch((error: unknown) =>
      deps.logger.warn({ err: errorText(error) }, "telegram: file notes could not be delivered"),
    );
  const attachments = [...(forwarded ? [forwarded] : []), ...intake.attachments, ...notes.map(fileNote)];
  // Nothing at all (no words, no file, no note about one) is no message.
  if (text === "" && files.length === 0 && attachments.length === 0) return;
  const result = await deps.service.receive({
    dedupeKeys: items.map((item) => dedupeKeyOf(item, deps.bot())),
    target,
    user: userOf(message.from!),
    // The person's words (and their own voice note's transcript) alone: the notes name files as
    // their sender named them, so they travel as file-note records (inbound-attachments.ts), and
    // a forward's words are someone else's, a forwarded-text record (ownTextOf).
    text: [text, ...intake.sections].filter(Boolean).join("\n\n"),
    files,
    ...(attachments.length > 0 ? { attachments } : {}),
    sentAt: isoTime(new Date(message.date * 1000)),
    // The session layer reads a command addressed to another bot (`/new@OtherBot`) as not ours.
    botUsername: deps.bot().username,
  });
  deps.logger.debug({ updateIds: items.map((item) => item.updateId), result }, "telegram: message recorded");
}
