/**
 * TelegramChannel: the Telegram adapter assembled on grammY. Long polling with @grammyjs/runner
 * (concurrent across chats, ordered per chat and topic only around the record-and-return
 * handlers; with several processes on one store only the elected poller polls) or a webhook; 429s retried by @grammyjs/auto-retry within set bounds; outgoing
 * traffic throttled per chat, per group and overall; the ThreadOutput factory registered with
 * the session layer so turns — also resumed ones after a restart — can reach any chat.
 */
import { autoRetry } from "@grammyjs/auto-retry";
import { sequentialize } from "@grammyjs/runner";
import { type Api, Bot, type Context } from "grammy";
import type { UserFromGetMe } from "grammy/types";
import type { Logger } from "pino";
import { z } from "zod";
import type { ConversationService } from "../../sessions/contracts.js";
import type { ThreadTarget } from "../../core/thread-target.js";
import type { ObservedMessage } from "../../subscriptions/observed-message.js";
import type { KeyValueSpace } from "../../store/store.js";
import { TelegramAccess } from "./telegram-access.js";
import { telegramFailure } from "./telegram-failure.js";
import { errorText } from "./telegram-errors.js";
import { intakeScreen, pollingScreen } from "./telegram-intake.js";
import { IntakeLog } from "../intake-log.js";
import { TelegramFiles } from "./telegram-files.js";
import { AttachmentIntake } from "../../attachments/inbound-attachments.js";
import { ALLOWED_UPDATES, COMMAND_MENU, telegramHandlers } from "./telegram-handlers.js";
import type { RemovedChat } from "./telegram-observe.js";
import type { Messenger } from "../../tools/messaging/messenger.js";
import { TelegramMessenger } from "./telegram-messenger.js";
import { TelegramThreadOutput } from "./telegram-output.js";
import {
  type Poller,
  PollerElection,
  type PollerLeases,
  pollerLeaseKey,
} from "./telegram-poller-election.js";
import { PollingLoop } from "./telegram-polling.js";
import type { DraftSupport, StreamTiming } from "./telegram-stream.js";
import { SendScheduler, type SendLimits, throttleTransformer } from "./telegram-throttle.js";
import { type WebhookOptions, WebhookServer } from "./telegram-webhook.js";

export interface TelegramChannelOptions {
  readonly botToken: string;
  /** Bot API root (TELEGRAM_API_ROOT), no trailing slash; https://api.telegram.org by default. */
  readonly apiRoot?: string;
  /** User ids that may use the bot anywhere (TELEGRAM_ALLOWED_USERS); they also approve pairings. */
  readonly allowedUsers: readonly string[];
  /** Group chat ids whose every member may use the bot (config `allowed_chats`). */
  readonly allowedChats: readonly string[];
  /** Webhook mode instead of long polling. */
  readonly webhook?: WebhookOptions;
  /** Largest file accepted from users. */
  readonly fileMaxBytes: number;
  /** Uploads are saved under `<workspaceRoot>/uploads/<session>/`. */
  readonly workspaceRoot: string;
  /** What saved files become for the model; default caps and no transcription when absent. */
  readonly attachments?: AttachmentIntake;
  readonly service: ConversationService;
  readonly logger: Logger;
  /** Skips getMe (tests, or a cached identity). */
  readonly botInfo?: UserFromGetMe;
  /** Persists approved pairing codes; in memory otherwise. */
  readonly accessStore?: KeyValueSpace;
  /** 429 / 5xx retries: defaults 5 attempts, at most 60 s per wait. */
  readonly retry?: { readonly maxRetryAttempts: number; readonly maxDelaySeconds: number };
  /** Backoff after a 409 or a stopped runner: defaults 1 s doubling to 60 s. */
  readonly pollingBackoff?: { readonly initialMs: number; readonly maxMs: number };
  /** Long-poll timeout in seconds (default 30). */
  readonly pollTimeoutSeconds?: number;
  /** Several processes on one store: only the holder of the poller lease polls (webhook mode: any). */
  readonly pollerLeases?: PollerLeases;
  /** Preview cadence overrides (tests); Telegram-safe defaults otherwise. */
  readonly timing?: { readonly private?: StreamTiming; readonly group?: StreamTiming };
  /** Outgoing limits; Telegram's published ones by default. */
  readonly sendLimits?: SendLimits;
  /** Told about every group, supergroup and channel message seen, for subscriptions. */
  readonly observe?: (message: ObservedMessage) => Promise<unknown> | undefined;
  /** Told when the bot left or was removed from a chat (subscriptions there end). */
  readonly onBotRemoved?: (chat: RemovedChat) => void;
}

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
    })
    .optional(),
  fileMaxBytes: z.number().int().positive(),
  workspaceRoot: z.string().min(1),
});

const DEFAULT_API_ROOT = "https://api.telegram.org";

/** The Telegram channel (see module comment). */
export class TelegramChannel {
  private readonly bot: Bot;
  private readonly polling: Poller | undefined;
  private readonly webhook: WebhookServer | undefined;
  private readonly drafts: DraftSupport = { enabled: true };
  private readonly logger: Logger;
  private started = false;

  constructor(private readonly options: TelegramChannelOptions) {
    const checked = optionsSchema.safeParse(options);
    if (!checked.success) throw new Error(`invalid Telegram options: ${z.prettifyError(checked.error)}`);
    const apiRoot = options.apiRoot ?? DEFAULT_API_ROOT;
    const logger = options.logger.child({ channel: "telegram" });
    this.logger = logger;
    this.bot = new Bot(options.botToken, {
      client: { apiRoot },
      ...(options.botInfo ? { botInfo: options.botInfo } : {}),
    });
    this.bot.api.config.use(throttleTransformer(new SendScheduler(options.sendLimits)));
    // Network errors are rethrown, not retried: the plugin's own retry for them is unbounded and
    // silent (doubling waits up to an hour); start-up and polling retry visibly instead.
    this.bot.api.config.use(
      autoRetry({
        ...(options.retry ?? { maxRetryAttempts: 5, maxDelaySeconds: 60 }),
        rethrowHttpErrors: true,
      }),
    );
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
      ...(options.accessStore ? { store: options.accessStore } : {}),
    });
    const files = new TelegramFiles({
      api: this.bot.api,
      token: options.botToken,
      apiRoot,
      workspaceRoot: options.workspaceRoot,
      maxBytes: options.fileMaxBytes,
    });
    // Malformed updates stop here, before anything reads their fields.
    const intake = new IntakeLog(logger);
    this.bot.api.config.use(pollingScreen(intake));
    this.bot.use(intakeScreen(intake));
    // Ordered per chat + topic, but only around handlers that record and return.
    this.bot.use(sequentialize(orderKey));
    this.bot.use(
      telegramHandlers({
        service: options.service,
        access,
        files,
        attachments:
          options.attachments ?? new AttachmentIntake({ workspaceRoot: options.workspaceRoot, logger }),
        bot: () => ({ id: this.bot.botInfo.id, username: this.bot.botInfo.username }),
        outputFor,
        logger,
        observe: options.observe,
        onBotRemoved: options.onBotRemoved,
      }),
    );
    if (options.webhook) {
      this.webhook = new WebhookServer(this.bot, options.webhook, ALLOWED_UPDATES, logger);
    } else {
      const loop = new PollingLoop(this.bot, {
        allowedUpdates: ALLOWED_UPDATES,
        logger,
        backoff: options.pollingBackoff ?? { initialMs: 1000, maxMs: 60_000 },
        ...(options.pollTimeoutSeconds !== undefined ? { timeoutSeconds: options.pollTimeoutSeconds } : {}),
      });
      this.polling = options.pollerLeases
        ? new PollerElection(loop, options.pollerLeases, { key: pollerLeaseKey(options.botToken), logger })
        : loop;
    }
    options.service.registerOutput("telegram", outputFor);
  }

  private outputFor(target: ThreadTarget): TelegramThreadOutput {
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

  /** Connect: identify the bot, register commands, then poll or serve the webhook. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    // One getMe, not `bot.init()`: grammY's init retries network errors forever, silently, and
    // the supervisor that starts this channel retries visibly instead.
    if (!this.bot.isInited()) {
      this.bot.botInfo = await this.bot.api.getMe().catch((error: unknown) => {
        this.started = false;
        throw telegramFailure(error, "getMe");
      });
    }
    await this.bot.api.setMyCommands([...COMMAND_MENU]).catch((error: unknown) => {
      this.logger.warn({ err: errorText(error) }, "telegram setMyCommands failed");
    });
    if (this.webhook) {
      await this.webhook.start();
    } else {
      await this.bot.api.deleteWebhook();
      this.polling?.start();
    }
    this.logger.info(
      { bot: this.bot.botInfo.username, mode: this.webhook ? "webhook" : "polling" },
      "telegram started",
    );
  }

  /** Stop receiving; turns already running finish through the session layer. */
  async stop(): Promise<void> {
    await this.polling?.stop();
    await this.webhook?.stop();
  }

  /** Receiving works: the webhook listens, or the last getUpdates answered. */
  isReady(): boolean {
    return this.webhook ? this.webhook.isListening() : this.polling?.isHealthy() === true;
  }

  /** The Bot API client the channel uses (for the subscriptions' Telegram directory). */
  get api(): Api {
    return this.bot.api;
  }

  /** Who the bot is (getMe; known after `start`, or from the `botInfo` option). */
  get botInfo(): UserFromGetMe {
    return this.bot.botInfo;
  }

  /** send_message / send_file for sessions on Telegram. */
  messenger(): Messenger {
    return new TelegramMessenger(this.bot.api, this.logger);
  }

  /** The webhook server's bound port (webhook mode). */
  webhookPort(): number | undefined {
    return this.webhook?.port();
  }
}

/** Per chat + topic for messages; button presses and stops are never queued behind messages. */
function orderKey(ctx: Context): string | undefined {
  const message = ctx.message;
  if (!message) return undefined;
  const topic = message.is_topic_message ? message.message_thread_id : undefined;
  return `${message.chat.id}:${topic ?? "-"}`;
}
