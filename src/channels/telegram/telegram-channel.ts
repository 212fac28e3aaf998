/**
 * TelegramChannel: the Telegram ChannelAdapter assembled on grammY. Updates arrive through the
 * receiver picked at construction (telegram-receiver.ts): long polling with @grammyjs/runner or a
 * webhook (with several processes on one store, only the elected poller polls); handling is
 * concurrent across chats, ordered per chat and topic (telegram-update-order.ts) only around the
 * handlers that check access, answer commands and record or hand over (a message's files are read
 * in its sender's lane after; a webhook update is answered once its message is handed over, within
 * the webhook's deadline; with several processes on one store, a person's /stop cancels their lane
 * in every one of them: lane-stop-broadcast.ts). Stopping gives the lanes a few seconds, then drops
 * what is left, telling each sender to send it again unless Telegram delivers it again (a webhook
 * update the stop left unanswered: hand-over-lanes.ts drain), so the turns' own grace still comes
 * within the shutdown's watchdog. Every Bot API call has a deadline by kind
 * (telegram-deadlines.ts); network failures, timeouts among them, are retried a few times, 429s and
 * 5xx within set bounds (telegram-answer-retry.ts; not the membership lookups of allowed_chats,
 * which run inside a chat's ordered section: a 429 there refuses for now); outgoing traffic is
 * throttled per chat, per group and overall. Its thread outputs work before `start`, so turns —
 * also resumed ones after a restart — can reach any chat.
 */
import { Api, Bot } from "grammy";
import type { UserFromGetMe } from "grammy/types";
import type { Logger } from "pino";
import { z } from "zod";
import type { ConversationService } from "../../sessions/contracts.js";
import type { ThreadTarget } from "../../core/thread-target.js";
import { type Clock, systemClock } from "../../core/clock.js";
import type { SlotBudget } from "../../store/slot-budget.js";
import type { KeyValueSpace } from "../../store/store.js";
import type { ChannelAdapter, ChannelHealth, ChannelHooks, InboundFileOptions } from "../channel-adapter.js";
import { createWorkspacePaths } from "../../tools/files/workspace-paths.js";
import { TelegramAccess } from "./telegram-access.js";
import { GroupMembership } from "./telegram-membership.js";
import { addressOf, telegramIdOf } from "./telegram-send.js";
import type { CallRetry } from "./telegram-answer-retry.js";
import { type CallStack, DEFAULT_RETRY, useCallStack } from "./telegram-call-stack.js";
import { type CallDeadlines, MAX_DEADLINE_MS } from "./telegram-deadlines.js";
import { telegramFailure } from "./telegram-failure.js";
import { errorText } from "./telegram-errors.js";
import { intakeScreen, screenPolled } from "./telegram-intake.js";
import { IntakeLog } from "../intake-log.js";
import { TelegramFiles } from "./telegram-files.js";
import { AttachmentIntake } from "../../attachments/inbound-attachments.js";
import { ALLOWED_UPDATES, COMMAND_MENU, telegramHandlers } from "./telegram-handlers.js";
import { AlbumCollector, type AlbumOptions } from "./telegram-albums.js";
import { HandOverLanes, LANE_MAX_WAITING, type LaneStopOptions } from "../shared/hand-over-lanes.js";
import { laneStopsOf, type LaneStopsOption } from "../shared/lane-stop-broadcast.js";
import { HandOverWaits } from "./telegram-hand-over-waits.js";
import { TelegramDirectory } from "./telegram-directory.js";
import { TelegramMessenger } from "./telegram-messenger.js";
import { ChatMigrations } from "./telegram-migrations.js";
import { TelegramThreadOutput } from "./telegram-output.js";
import { inUpdateOrder } from "./telegram-update-order.js";
import { PollerElection, type PollerLeases, pollerLeaseKey } from "./telegram-poller-election.js";
import { PollingReceiver } from "./telegram-polling.js";
import type { TelegramReceiver } from "./telegram-receiver.js";
import type { DraftSupport, StreamTiming } from "./telegram-stream.js";
import { SendScheduler, type SendLimits } from "./telegram-throttle.js";
import { type WebhookOptions, WebhookReceiver } from "./telegram-webhook.js";

export interface TelegramChannelOptions extends InboundFileOptions, ChannelHooks, LaneStopsOption {
  readonly botToken: string;
  /** Bot API root (TELEGRAM_API_ROOT), no trailing slash; https://api.telegram.org by default. */
  readonly apiRoot?: string;
  /** User ids that may use the bot anywhere (TELEGRAM_ALLOWED_USERS); they also approve pairings. */
  readonly allowedUsers: readonly string[];
  /** Group chat ids whose every member (getChatMember) may use the bot (config `allowed_chats`). */
  readonly allowedChats: readonly string[];
  /** Webhook mode instead of long polling. */
  readonly webhook?: WebhookOptions;
  readonly service: ConversationService;
  readonly logger: Logger;
  /** Skips getMe (tests, or a cached identity). */
  readonly botInfo?: UserFromGetMe;
  /** Persists approved pairings and groups' supergroup migrations. */
  readonly accessStore: KeyValueSpace;
  /**
   * Where the once-an-hour replies to people refused are counted: the app's hourly budget
   * (AppContext.budget), shared by every process on the store.
   */
  readonly budget: SlotBudget;
  /** 429 / 5xx retries: defaults 5 attempts, at most 60 s per wait. */
  readonly retry?: CallRetry;
  /** Backoff after a 409 or a stopped runner: defaults 1 s doubling to 60 s. */
  readonly pollingBackoff?: { readonly initialMs: number; readonly maxMs: number };
  /** Long-poll timeout in seconds (default 30). */
  readonly pollTimeoutSeconds?: number;
  /**
   * How long a Bot API call may go unanswered: defaults 30 s, 10 s for edits and chat actions,
   * 5 min for uploads, getUpdates its poll timeout + 10 s (see telegram-deadlines.ts).
   */
  readonly deadlines?: CallDeadlines;
  /** Several processes on one store: only the holder of the poller lease polls (webhook mode: any). */
  readonly pollerLeases?: PollerLeases;
  /** Preview cadence overrides (tests); Telegram-safe defaults otherwise. */
  readonly timing?: { readonly private?: StreamTiming; readonly group?: StreamTiming };
  /** Outgoing limits; Telegram's published ones by default. */
  readonly sendLimits?: SendLimits;
  /** How long an album's items are waited for (telegram-albums.ts's defaults otherwise). */
  readonly albums?: AlbumOptions;
  /**
   * The clock the channel's own waits run on — an album's items, and `stop`'s wait for the
   * messages still being read and for the notes to their senders: the system clock by default.
   */
  readonly clock?: Clock;
  /** How long `stop` waits for messages whose files are still being read (hand-over-lanes.ts). */
  readonly laneStop?: Omit<LaneStopOptions, "clock">;
}

const deadlineMs = z
  .number()
  .int()
  .positive()
  .max(MAX_DEADLINE_MS, `at most ${MAX_DEADLINE_MS} ms: grammY's own timeout ends an upload then`);

const optionsSchema = z.object({
  botToken: z.string().regex(/^\d+:[\w-]+$/, "a bot token looks like 123456:ABC-def"),
  apiRoot: z
    .url()
    .refine((url) => !url.endsWith("/"), "apiRoot must not end with /")
    .optional(),
  allowedUsers: z.array(z.string().regex(/^\d+$/, "user ids are numbers")),
  allowedChats: z.array(z.string().regex(/^-?\d+$/, "chat ids are numbers")),
  webhook: z
    .object({
      url: z.url().startsWith("https://"),
      secret: z.string().regex(/^[\w-]{1,256}$/),
      port: z.number().int().min(0).max(65_535),
      path: z.string().startsWith("/"),
      host: z.string().optional(),
      answerWithinMs: z.number().int().positive().optional(),
      maxBodyBytes: z.number().int().positive().optional(),
    })
    .optional(),
  deadlines: z
    .object({ callMs: deadlineMs, editMs: deadlineMs, uploadMs: deadlineMs, pollMarginMs: deadlineMs })
    .optional(),
  fileMaxBytes: z.number().int().positive(),
  workspaceRoot: z.string().min(1),
  laneStop: z.object({ withinMs: z.number().int().nonnegative().optional() }).optional(),
});

const DEFAULT_API_ROOT = "https://api.telegram.org";

/**
 * Long polling, its answers screened by the intake; with poller leases, only while this process
 * holds the bot's poller lease.
 */
function pollingReceiver(
  bot: Bot,
  options: TelegramChannelOptions,
  logger: Logger,
  intake: IntakeLog,
): TelegramReceiver {
  const polling = new PollingReceiver(bot, {
    allowedUpdates: ALLOWED_UPDATES,
    logger,
    screen: (answer) => screenPolled(answer, intake),
    backoff: options.pollingBackoff ?? { initialMs: 1000, maxMs: 60_000 },
    ...(options.pollTimeoutSeconds !== undefined ? { timeoutSeconds: options.pollTimeoutSeconds } : {}),
  });
  if (!options.pollerLeases) return polling;
  return new PollerElection(polling, options.pollerLeases, { key: pollerLeaseKey(options.botToken), logger });
}

/** The Telegram channel (see module comment). */
export class TelegramChannel implements ChannelAdapter {
  readonly platform = "telegram";
  readonly description: string;
  /** send_message / send_file for sessions on Telegram. */
  readonly messenger: TelegramMessenger;
  private readonly bot: Bot;
  private readonly receiver: TelegramReceiver;
  private readonly drafts: DraftSupport = { enabled: true };
  private readonly logger: Logger;
  private readonly access: TelegramAccess;
  private readonly migrations: ChatMigrations;
  private readonly lanes: HandOverLanes;
  private started = false;

  constructor(private readonly options: TelegramChannelOptions) {
    const checked = optionsSchema.safeParse(options);
    if (!checked.success) throw new Error(`invalid Telegram options: ${z.prettifyError(checked.error)}`);
    const apiRoot = options.apiRoot ?? DEFAULT_API_ROOT;
    const logger = options.logger.child({ channel: "telegram" });
    this.logger = logger;
    const clock = options.clock ?? systemClock;
    this.lanes = new HandOverLanes({
      maxWaiting: LANE_MAX_WAITING,
      logger,
      stop: { ...options.laneStop, clock },
      stopsElsewhere: laneStopsOf(options, this.platform, logger),
    });
    this.bot = new Bot(options.botToken, {
      client: { apiRoot },
      ...(options.botInfo ? { botInfo: options.botInfo } : {}),
    });
    const migrations = new ChatMigrations({ store: options.accessStore, logger });
    this.migrations = migrations;
    const stack: CallStack = {
      endpoint: { apiRoot, token: options.botToken },
      deadlines: options.deadlines,
      scheduler: new SendScheduler(options.sendLimits),
      migrations,
    };
    useCallStack(this.bot.api, { ...stack, retry: options.retry ?? DEFAULT_RETRY });
    // Membership lookups for allowed_chats run inside a chat's ordered section: a 429 there is
    // not waited out (the answer retry would hold the chat for minutes) but refused for now, and
    // nobody new is looked up until Telegram's wait is over (telegram-membership.ts).
    const lookupApi = new Api(options.botToken, { apiRoot });
    useCallStack(lookupApi, stack);
    this.bot.catch((error) => {
      logger.error(
        { err: errorText(error.error), updateId: error.ctx.update.update_id },
        "telegram update failed",
      );
    });
    const outputFor = (target: ThreadTarget) => this.outputFor(target);
    const access = new TelegramAccess({
      allowedUsers: options.allowedUsers,
      allowedChats: options.allowedChats,
      logger,
      store: options.accessStore,
      replies: options.budget,
      // The check wake-ups run (mayAct), kept a few minutes for messages and presses.
      members: new GroupMembership({
        lookup: (chatId, userId) => this.directoryOn(lookupApi).isMember(String(chatId), String(userId)),
        logger,
      }),
    });
    this.access = access;
    // One view of the workspace for saving what people send and reading it back, narrowed for each
    // message to its conversation's (conversation-paths.ts): another's uploads are never reached.
    const workspace = createWorkspacePaths({
      root: options.workspaceRoot,
      offLimits: options.serviceFiles ?? [],
    });
    const files = new TelegramFiles({
      api: this.bot.api,
      token: options.botToken,
      apiRoot,
      workspace,
      maxBytes: options.fileMaxBytes,
      uploads: options.uploads,
    });
    // Malformed updates stop here, before anything reads their fields (polled ones: pollingReceiver).
    const intake = new IntakeLog(logger);
    this.bot.use(intakeScreen(intake));
    // Webhook mode answers once an update's message is handed over, outside the chat's order.
    const waits = new HandOverWaits();
    if (options.webhook) this.bot.use(waits.middleware());
    // Ordered per chat + topic, but only around handlers that check access, answer commands and
    // record or hand over — a message's files are read in its sender's lane after (telegram-hand-over.ts).
    this.bot.use(inUpdateOrder());
    this.bot.use(
      telegramHandlers({
        service: options.service,
        access,
        migrations,
        files,
        attachments: options.attachments ?? new AttachmentIntake({ workspace, logger }),
        lanes: this.lanes,
        albums: new AlbumCollector(clock, options.albums),
        waits,
        // Asked only once the channel has stopped, long after the receiver is set below.
        redelivers: (updateId) => this.receiver.redelivers?.(updateId) ?? false,
        bot: () => ({ id: this.bot.botInfo.id, username: this.bot.botInfo.username }),
        outputFor,
        logger,
        observe: options.observe,
        observeChange: options.observeChange,
        onBotRemoved: options.onBotRemoved,
      }),
    );
    this.receiver = options.webhook
      ? new WebhookReceiver(this.bot, options.webhook, ALLOWED_UPDATES, logger)
      : pollingReceiver(this.bot, options, logger, intake);
    this.description = `telegram (${this.receiver.description})`;
    this.messenger = new TelegramMessenger(this.bot.api, logger, () => this.directory());
  }

  /** The thread output for `target` (drafts, previews and sends on the channel's Bot API client). */
  outputFor(target: ThreadTarget): TelegramThreadOutput {
    return new TelegramThreadOutput(
      {
        api: this.bot.api,
        logger: this.logger,
        drafts: this.drafts,
        ...(this.options.timing ? { timing: this.options.timing } : {}),
      },
      target,
    );
  }

  /**
   * Whether the person may use the bot in `target`'s chat now: an allowed or paired user, or any
   * member of an allowed group — and, in a group, still in it (getChatMember: not left or
   * kicked), however they are allowed (a scheduled task or a subscription of theirs wakes a turn
   * only then; see ChannelAdapter.mayAct). Their private chat with the bot needs no membership
   * check. Rejects when Telegram cannot say (before `start`, or an API error).
   */
  async mayAct(userId: string, target: ThreadTarget): Promise<boolean> {
    const id = telegramIdOf(userId);
    if (id === undefined) return false;
    const { chatId, isPrivate } = addressOf(target);
    // A session's chat may have become a supergroup since: either id listed allows it.
    const current = isPrivate ? chatId : await this.migrations.currentOf(chatId);
    const standing = await this.access.standing(
      {
        id: chatId,
        type: isPrivate ? "private" : "group",
        ...(current !== chatId ? { alsoKnownAs: current } : {}),
      },
      { id, name: "" },
    );
    if (standing === undefined || isPrivate) return standing !== undefined;
    // Asked afresh (not the few minutes' answer messages use): a wake-up is rare, and acts unwatched.
    return this.directory().isMember(String(current), userId);
  }

  /**
   * Connect: identify the bot, register commands, hear the other processes' stops, then start the
   * receiver. A start that fails undoes what it began (the receiver, the subscription), so the
   * supervisor's next attempt starts again from scratch.
   */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    try {
      // One getMe, not `bot.init()`: grammY's init retries network errors forever, silently, and
      // the supervisor that starts this channel retries visibly instead.
      if (!this.bot.isInited()) {
        this.bot.botInfo = await this.bot.api.getMe().catch((error: unknown) => {
          throw telegramFailure(error, "getMe");
        });
      }
      await this.bot.api.setMyCommands([...COMMAND_MENU]).catch((error: unknown) => {
        this.logger.warn({ err: errorText(error) }, "telegram setMyCommands failed");
      });
      // Before the first update: the stops other processes take reach the lanes here.
      await this.lanes.listen();
      await this.receiver.start();
    } catch (error) {
      // Undone here, and only here (startOrStop stops only an abandoned attempt). Undoing (which
      // clears `started`) never replaces the start's own error, which tells the supervisor what to do.
      await this.stop().catch((undoing: unknown) => {
        this.logger.warn({ err: errorText(undoing) }, "telegram: stopping a failed start failed");
      });
      throw error;
    }
    this.logger.info({ bot: this.bot.botInfo.username, mode: this.receiver.mode }, "telegram started");
  }

  /**
   * Stop receiving, and hand over the messages whose files are still being read, for a few seconds
   * at most (the shutdown's watchdog must still leave the turns their grace): those left then are
   * dropped, each one's sender told to send it again unless Telegram delivers its update again (a
   * webhook update not answered when the receiver stopped, which is settled by then); then other
   * processes' stops are no longer heard. Turns already running finish through the session layer.
   * A `start` after it starts the channel again.
   */
  async stop(): Promise<void> {
    this.started = false;
    await this.receiver.stop();
    await this.lanes.drain();
  }

  /** Receiving works: the webhook listens, or the last getUpdates answered. */
  health(): ChannelHealth {
    return this.receiver.health();
  }

  /**
   * The chats and members for subscriptions, on the channel's Bot API client (after `start`); an
   * upgraded group's supergroup resolves to the group's id, as its session and messages keep it.
   */
  directory(): TelegramDirectory {
    return this.directoryOn(this.bot.api);
  }

  private directoryOn(api: Api): TelegramDirectory {
    return new TelegramDirectory(api, {
      botInfo: this.bot.botInfo,
      originOf: (chatId) => this.migrations.originOf(chatId),
    });
  }

  /** The webhook server's bound port (webhook mode). */
  webhookPort(): number | undefined {
    return this.receiver.port();
  }
}
