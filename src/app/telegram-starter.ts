/**
 * The Telegram platform's part of the app: configured when a bot token is set; builds the grammY
 * channel (long polling, or the webhook when configured) with the config's access lists and file
 * limit, keeping pairings in the store so they survive restarts, and counting the replies to
 * people refused in the app's budget, so every process on the store shares one an hour. How it is started and
 * registered is the same for every platform (channel-starter.ts).
 */
import type { TelegramChannel } from "../channels/telegram/telegram-channel.js";
import type { WebhookOptions } from "../channels/telegram/telegram-webhook.js";
import type { CoworkerConfig } from "../config/schema.js";
import type { ChannelContext } from "./app-parts.js";
import type { AdapterBase, AdapterFactory } from "./channel-starter.js";

function hasCredentials(config: CoworkerConfig): boolean {
  return config.telegram.bot_token !== undefined;
}

/** The channel's webhook options from `telegram.webhook`: all interfaces unless `host` is set. */
export function webhookOptions(webhook: NonNullable<CoworkerConfig["telegram"]["webhook"]>): WebhookOptions {
  return {
    url: webhook.url,
    secret: webhook.secret,
    port: webhook.port,
    path: webhook.path,
    ...(webhook.host !== undefined ? { host: webhook.host } : {}),
  };
}

async function create(context: ChannelContext, base: AdapterBase): Promise<TelegramChannel> {
  const section = context.config.telegram;
  if (section.bot_token === undefined) throw new Error("telegram.bot_token is not set");
  // grammY loads only when Telegram is configured.
  const { TelegramChannel } = await import("../channels/telegram/telegram-channel.js");
  const webhook = section.webhook;
  return new TelegramChannel({
    ...base,
    botToken: section.bot_token,
    apiRoot: section.api_root.replace(/\/+$/, ""),
    allowedUsers: section.allowed_users,
    allowedChats: section.allowed_chats,
    ...(webhook ? { webhook: webhookOptions(webhook) } : {}),
    fileMaxBytes: section.file_max_bytes,
    accessStore: context.store.space("grants"),
    budget: context.budget,
    // Several processes on one store: one of them polls (the holder of the poller lease).
    ...(context.coordination.distributed ? { pollerLeases: context.coordination } : {}),
  });
}

/** Telegram as the app builds it from the config. */
export const telegramAdapter: AdapterFactory = { platform: "telegram", hasCredentials, create };
