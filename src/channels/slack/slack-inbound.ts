/**
 * SlackInbound: turns message / app_mention events into InboundMessages for the session layer.
 * The event is already acknowledged when this runs (Bolt acks Events API deliveries first).
 * Edits and deletions of channel messages (message_changed / message_deleted) go only to the
 * observer (slack-message-change.ts), never to a turn.
 * Steps: validate → decide (own / other bots / subtypes / mention rules) → thread check for
 * mention-less replies → claim the post once (its message and app_mention twins, and
 * redeliveries, share channel + ts) → access policy (one polite private refusal, the service never
 * called) → download files → `service.receive`, which only records and schedules. Messages of one
 * thread pass the claim and the access check in arrival order, one at a time, so twins never pass
 * the claim together; the files are then downloaded and read in the sender's hand-over lane
 * (slack-lanes.ts, where a command typed as a message may wait and a stop cancels the lane), so
 * one person's slow file holds only their own later messages in the thread.
 * A reply dropped by the thread check is not claimed: when its author edits the mention in soon
 * after (EDIT_WINDOW_MS), Slack's app_mention for the edit, with the same ts, is still heard.
 * The thread's order is bounded per sender, a flood refused before any check — but for a stop,
 * which is let a little past it (slack-thread-order.ts).
 */
import type { Logger } from "pino";
import type { ConversationService } from "../../sessions/contracts.js";
import { fileNote } from "../../core/attachment.js";
import type { InboundMessage } from "../../core/inbound-message.js";
import type { ThreadTarget } from "../../core/thread-target.js";
import type { ObservedChange } from "../../subscriptions/observed-change.js";
import type { ObservedMessage } from "../../subscriptions/observed-message.js";
import { isMessageChange, slackChangeOf } from "./slack-message-change.js";
import { LruCache } from "../../core/lru-cache.js";
import { type ParsedCommand, parseTextCommand } from "../../core/text-commands.js";
import {
  LANE_FULL,
  type LaneSignal,
  type LaneStopOptions,
  type StopsElsewhere,
} from "../shared/hand-over-lanes.js";
import type { AttachmentIntake } from "../../attachments/inbound-attachments.js";
import type { AccessPolicy } from "./slack-access.js";
import { describeError, type SlackClients } from "./slack-api.js";
import { kindOf } from "./slack-conversation-kind.js";
import {
  type BotIdentity,
  decide,
  isBotPost,
  isChannelTalk,
  type MessageEvent,
  messageEventSchema,
  messageText,
  mentionsBot,
  postAuthorId,
  sentAtOf,
} from "./slack-events.js";
import { downloadFiles, type FileDownloadOptions, shownFileName } from "./slack-files.js";
import { isStop, SlackLanes } from "./slack-lanes.js";
import { escapeMrkdwn } from "./slack-limits.js";
import { ORDER_FULL, SlackThreadOrder } from "./slack-thread-order.js";
import { slackThreadTarget } from "./slack-thread-target.js";
import { NO_UNFURLS } from "./slack-unfurls.js";
import type { ThreadRegistry } from "./slack-threads.js";
import type { UserDirectory } from "./slack-users.js";

export interface InboundDeps {
  readonly bot: BotIdentity;
  readonly service: ConversationService;
  readonly clients: SlackClients;
  readonly threads: ThreadRegistry;
  readonly users: UserDirectory;
  readonly access: AccessPolicy;
  readonly allowedBots: ReadonlySet<string>;
  readonly requireMentionInThreads: boolean;
  readonly files: Omit<FileDownloadOptions, "logger">;
  /** Turns saved files into model input (images, PDF text, transcripts, notes). */
  readonly attachments: AttachmentIntake;
  readonly logger: Logger;
  /** Told about every message seen in a channel (subscriptions buffer them). */
  readonly observe?: (message: ObservedMessage) => Promise<unknown> | undefined;
  /** Told about every edit or deletion of a channel message (subscriptions revise their copy). */
  readonly observeChange?: ((change: ObservedChange) => Promise<unknown> | undefined) | undefined;
  /** How long `stop` waits for messages whose files are still being read. */
  readonly laneStop?: LaneStopOptions | undefined;
  /** Several processes on one store: a sender's stop cancels their lane in every one of them. */
  readonly stopsElsewhere?: StopsElsewhere | undefined;
}

/** The envelope fields of an Events API delivery that matter here. */
export interface EventEnvelope {
  readonly event_id?: string;
  readonly team_id?: string;
}

const ACCEPTED = new Set(["started", "queued", "answered", "command"]);

/**
 * Whether a client_msg_id can serve as a dedupe key: Slack's are UUIDs, so one of printable ASCII
 * without spaces, at most 64 characters. Any other is left out (the event id and channel + ts
 * keys still dedupe the message); one too long would overflow the store's key limit.
 */
export function usableClientMsgId(id: string | undefined): id is string {
  return id !== undefined && /^[\x21-\x7e]{1,64}$/.test(id);
}

export class SlackInbound {
  private readonly claimed = new LruCache<string, true>(20_000);
  private readonly order = new SlackThreadOrder();
  private readonly lanes: SlackLanes;

  constructor(private readonly deps: InboundDeps) {
    this.lanes = new SlackLanes({
      logger: deps.logger,
      laneStop: deps.laneStop,
      stopsElsewhere: deps.stopsElsewhere,
      post: (target, text) => this.post(target, text),
      tell: (target, lines) => this.tell(target, lines),
    });
  }

  /** Before the first event: hear the stops other processes take (several processes on one store). */
  async listen(): Promise<void> {
    await this.lanes.listen();
  }

  /**
   * The channel stopping: messages still being read get a bounded time, then are dropped, each
   * one's sender told in its thread to send it again; then other processes' stops are no longer heard.
   */
  async stop(): Promise<void> {
    await this.lanes.drain();
  }

  /**
   * `userId`'s stop from the Stop button or `/coworker stop` for the target's thread: what they
   * have waiting in that thread's hand-over lane is dropped, as their typed stop drops it, and they
   * are told so (slack-lanes.ts). Stopping the turn is the caller's.
   */
  async stopLane(target: ThreadTarget, userId: string): Promise<void> {
    await this.lanes.stop(target, userId);
  }

  /** Handle one message or app_mention event; never throws. */
  async handle(rawEvent: unknown, envelope: EventEnvelope): Promise<void> {
    // An edit or deletion never reaches a turn (decide ignores its subtype): it only revises subscriptions' copies.
    if (isMessageChange(rawEvent)) return this.reportChange(rawEvent);
    const parsed = messageEventSchema.safeParse(rawEvent);
    if (!parsed.success) {
      this.deps.logger.debug({ issues: parsed.error.issues.length }, "slack event ignored: unexpected shape");
      return;
    }
    const event = parsed.data;
    const reporting =
      this.deps.observe && isChannelTalk(event, this.deps.bot) ? this.report(event) : undefined;
    try {
      await this.act(event, envelope);
    } finally {
      await reporting;
    }
  }

  private async act(event: MessageEvent, envelope: EventEnvelope): Promise<void> {
    const decision = decide(event, {
      bot: this.deps.bot,
      allowedBots: this.deps.allowedBots,
      requireMentionInThreads: this.deps.requireMentionInThreads,
      nowMs: Date.now(),
    });
    if (!decision.act) {
      this.deps.logger.trace({ reason: decision.reason, channel: event.channel }, "slack event ignored");
      return;
    }
    const postKey = `${event.channel}:${event.ts}`;
    const target = slackThreadTarget(this.deps.bot.teamId, {
      channel: event.channel,
      thread: event.thread_ts ?? event.ts,
      user: decision.author,
      kind: decision.kind,
      senderTeam: event.team ?? envelope.team_id,
    });
    // Read before the thread's order, which lets the sender's stop past their bound.
    const command = event.files?.length
      ? undefined
      : parseTextCommand(messageText(event, this.deps.bot.userId));
    const stop = isStop(command);
    let refusing: Promise<void> | undefined;
    const work = async () => {
      if (this.claimed.get(postKey)) return;
      try {
        if (decision.needsThread && !(await this.deps.threads.isPartOf(target))) return;
        this.claimed.set(postKey, true);
        refusing = (await this.admit(event, envelope, target, decision.author, command))?.refusing;
      } catch (error) {
        this.unclaim(postKey, error);
      }
    };
    const ordered = await this.order.run(`${target.channel}:${target.thread}`, decision.author, work, {
      stop,
    });
    if (ordered !== "ran") {
      this.deps.logger.info(
        { channel: event.channel, user: decision.author, told: ordered === "refused, tell" },
        "slack thread order full: message not taken",
      );
      if (ordered === "refused, tell") await this.refuse(target, decision.author, ORDER_FULL);
      return;
    }
    // Outside the thread's order: a full lane's refusal (the files are read in the sender's lane).
    await refusing;
  }

  private unclaim(postKey: string, error: unknown): void {
    this.claimed.delete(postKey);
    this.deps.logger.error({ err: describeError(error), postKey }, "slack message not handled");
  }

  /**
   * The quick part, in the thread's order: the access check, then the message (`command`: the
   * command it types, if any) is routed through its sender's hand-over lane (slack-lanes.ts), where
   * its files are downloaded and read. Resolves with the refusal of a message a full lane did not
   * take, if any, still to be posted (wrapped: a promise awaited here would wait for it).
   */
  private async admit(
    event: MessageEvent,
    envelope: EventEnvelope,
    target: ThreadTarget,
    author: string,
    command: ParsedCommand | undefined,
  ): Promise<{ readonly refusing: Promise<void> } | undefined> {
    const access = await this.deps.access.check(author, event.channel, kindOf(target));
    if (!access.allowed) {
      if (this.deps.access.shouldTell(author, event.channel))
        await this.refuse(target, author, access.refusal);
      return undefined;
    }
    const postKey = `${event.channel}:${event.ts}`;
    const handOver = (signal: LaneSignal) =>
      this.process(event, envelope, target, author, signal).catch((error: unknown) =>
        this.unclaim(postKey, error),
      );
    // Claimed under channel + ts, the id its twins and redeliveries share, which `receive` records.
    const claimDrop = () => this.deps.service.firstDelivery([postDedupeKey(event)]);
    const routed = await this.lanes.route({ event, target, author, command, handOver, claimDrop });
    if (routed.kind !== "full") return undefined;
    this.claimed.delete(postKey);
    this.deps.logger.info({ channel: event.channel }, "slack hand-over lane full");
    return { refusing: this.tell(target, [LANE_FULL]) };
  }

  /**
   * Download and read the message's files, tell the person about them, and hand it over — unless
   * its lane was cancelled meanwhile (`signal`): then nothing is told nor handed over.
   */
  private async process(
    event: MessageEvent,
    envelope: EventEnvelope,
    target: ThreadTarget,
    author: string,
    signal: LaneSignal,
  ): Promise<void> {
    const user = await this.deps.users.user(author);
    const limited = this.deps.attachments.limit(event.files ?? [], (file) =>
      shownFileName(file.name ?? file.id),
    );
    const downloaded = limited.kept.length
      ? await downloadFiles(limited.kept, target, author, {
          ...this.deps.files,
          logger: this.deps.logger,
        })
      : { files: [], notes: [] };
    const intake = await this.deps.attachments.process(downloaded.files, target, author);
    if (!signal.handingOver()) {
      this.deps.logger.info({ channel: target.channel }, "slack hand-over cancelled");
      return;
    }
    const notes = [...downloaded.notes, ...limited.notes, ...intake.notes];
    await this.tell(target, [...notes, ...intake.hints]);
    // The person's words (and their own voice note's transcript) alone: the notes name files as
    // their sender named them, so they travel as file-note records (inbound-attachments.ts).
    const text = [messageText(event, this.deps.bot.userId), ...intake.sections]
      .filter((part) => part.length > 0)
      .join("\n\n");
    const attachments = [...intake.attachments, ...notes.map(fileNote)];
    const message: InboundMessage = {
      dedupeKeys: [
        ...(envelope.event_id ? [`slack:event:${envelope.event_id}`] : []),
        ...(usableClientMsgId(event.client_msg_id) ? [`slack:msg:${event.client_msg_id}`] : []),
        postDedupeKey(event),
      ],
      target,
      user,
      text,
      files: downloaded.files,
      ...(attachments.length > 0 ? { attachments } : {}),
      sentAt: sentAtOf(event.ts),
    };
    const result = await this.deps.service.receive(message);
    if (ACCEPTED.has(result.status)) {
      this.deps.threads.remember(target.channel, target.thread as string);
      this.deps.threads.rememberLatest(target.channel, author, target.thread as string, event.ts);
    }
    this.deps.logger.debug({ status: result.status, channel: target.channel }, "slack message received");
  }

  /** Report channel talk to the observer; its failures are logged, never passed on. */
  private async report(event: MessageEvent): Promise<void> {
    const isBot = isBotPost(event);
    const authorId = postAuthorId(event);
    const name = isBot
      ? (event.bot_profile?.name ?? event.username ?? authorId)
      : (await this.deps.users.user(authorId)).name;
    try {
      await this.deps.observe?.({
        platform: "slack",
        workspace: this.deps.bot.teamId,
        channel: event.channel,
        ...(event.thread_ts !== undefined && event.thread_ts !== event.ts ? { thread: event.thread_ts } : {}),
        id: event.ts,
        author: { id: authorId, name, isBot },
        text: messageText(event, ""),
        at: sentAtOf(event.ts),
        mentionsBot: mentionsBot(event, this.deps.bot.userId),
      });
    } catch (error) {
      this.deps.logger.warn({ err: describeError(error) }, "slack channel message could not be reported");
    }
  }

  /** Report an edit or deletion of a channel message to the observer; its failures are logged, never passed on. */
  private async reportChange(rawEvent: unknown): Promise<void> {
    if (!this.deps.observeChange) return;
    const change = slackChangeOf(rawEvent, this.deps.bot);
    if (!change) {
      this.deps.logger.debug("slack message change ignored: unexpected shape, or in a DM");
      return;
    }
    try {
      await this.deps.observeChange(change);
    } catch (error) {
      this.deps.logger.warn({ err: describeError(error) }, "slack message change could not be reported");
    }
  }

  /**
   * Tell the person, in the thread, best effort (a failure is logged): what happened to their files
   * (notes and hints), that their lane is full, what their stop dropped.
   */
  private async tell(target: ThreadTarget, lines: readonly string[]): Promise<void> {
    if (lines.length === 0) return;
    try {
      await this.post(target, lines.join("\n"));
    } catch (error) {
      this.deps.logger.warn({ err: describeError(error) }, "slack note to a sender could not be delivered");
    }
  }

  /**
   * Post `text` in the target's thread; rejects when Slack refuses it. Escaped: the notes name
   * the files as their sender named them, so a name cannot ping or link.
   */
  private async post(target: ThreadTarget, text: string): Promise<void> {
    await this.deps.clients.api.chat.postMessage({
      channel: target.channel,
      text: escapeMrkdwn(text),
      ...(target.thread ? { thread_ts: target.thread } : {}),
      ...NO_UNFURLS,
    });
  }

  /** Tell `userId` privately (ephemeral) in the target's thread, best effort: their access refused, a full order. */
  private async refuse(target: ThreadTarget, userId: string, text: string): Promise<void> {
    try {
      await this.deps.clients.api.chat.postEphemeral({
        channel: target.channel,
        user: userId,
        text,
        ...(target.thread ? { thread_ts: target.thread } : {}),
      });
    } catch (error) {
      this.deps.logger.warn({ err: describeError(error) }, "slack refusal could not be delivered");
    }
  }
}

/** The dedupe id every delivery of one post shares (its twins, Slack's retries): channel + ts. */
function postDedupeKey(event: MessageEvent): string {
  return `slack:${event.channel}:${event.ts}`;
}
