/**
 * Joins the Telegram channel to the app: configured when a bot token is set; starts the grammY
 * channel (long polling, or the webhook when configured) on the session layer, registers its
 * Messenger for send_message / send_file, and keeps pairings in the store so they survive restarts.
 * Channel subscriptions hear every group and channel message and the bot's removal from chats, and
 * get the Telegram directory once the bot's identity is known.
 */
import type { TelegramChannel } from "../channels/telegram/telegram-channel.js";
import type { CoworkerConfig } from "../config/schema.js";
import { attachmentIntakeFromConfig } from "./attachment-intake.js";
import type { TelegramDirectory } from "../subscriptions/platforms/telegram-directory.js";
import type { ChannelContext, ChannelStarter, RunningChannel } from "./app-parts.js";
import type { AppSchedules } from "./app-schedules.js";
import type { AppSubscriptions } from "./app-subscriptions.js";
import type { MessengerRegistry } from "./messenger-registry.js";
import { startOrStop } from "./start-or-stop.js";

/** The platform name the Telegram channel registers under. */
export const TELEGRAM_PLATFORM = "telegram";

function hasCredentials(config: CoworkerConfig): boolean {
  return config.telegram.bot_token !== undefined;
}

/** The bot's Telegram directory, on the channel's Bot API client (after `start`: getMe is known). */
export async function telegramDirectoryOf(channel: TelegramChannel): Promise<TelegramDirectory> {
  const { TelegramDirectory } = await import("../subscriptions/platforms/telegram-directory.js");
  return new TelegramDirectory(channel.api, { botInfo: channel.botInfo });
}

async function start(
  context: ChannelContext,
  messengers: MessengerRegistry,
  subscriptions: AppSubscriptions,
  schedules: AppSchedules | undefined,
  signal?: AbortSignal,
): Promise<RunningChannel> {
  const { config } = context;
  const section = config.telegram;
  if (section.bot_token === undefined) throw new Error("telegram.bot_token is not set");
  const webhook = section.webhook;
  // grammY loads only when Telegram is configured.
  const { TelegramChannel } = await import("../channels/telegram/telegram-channel.js");
  const channel = new TelegramChannel({
    botToken: section.bot_token,
    apiRoot: section.api_root.replace(/\/+$/, ""),
    allowedUsers: section.allowed_users,
    allowedChats: section.allowed_chats,
    ...(webhook
      ? { webhook: { url: webhook.url, secret: webhook.secret, port: webhook.port, path: webhook.path } }
      : {}),
    fileMaxBytes: section.file_max_bytes,
    workspaceRoot: config.workspace.root,
    attachments: attachmentIntakeFromConfig(config, context.logger),
    service: context.service,
    logger: context.logger,
    accessStore: context.store.space("grants"),
    ...subscriptions.channelHooks,
    onBotRemoved: (channel) => {
      subscriptions.channelHooks.onBotRemoved(channel);
      schedules?.channelGone(channel);
    },
  });
  messengers.register(TELEGRAM_PLATFORM, channel.messenger());
  await startOrStop(channel, signal);
  subscriptions.registerDirectory(await telegramDirectoryOf(channel));
  return {
    description: webhook ? `telegram (webhook ${webhook.path})` : "telegram (polling)",
    connected: () => channel.isReady(),
    stopIntake: () => channel.stop(),
    close: () => channel.stop(),
  };
}

/** The Telegram ChannelStarter; its Messenger goes into `messengers`, its hooks to `subscriptions`. */
export function telegramStarter(
  messengers: MessengerRegistry,
  subscriptions: AppSubscriptions,
  schedules?: AppSchedules,
): ChannelStarter {
  return {
    platform: TELEGRAM_PLATFORM,
    hasCredentials,
    start: (context, signal) => start(context, messengers, subscriptions, schedules, signal),
  };
}
