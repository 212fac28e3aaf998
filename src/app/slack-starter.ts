/**
 * The Slack platform's part of the app: configured when a bot token and either an app token
 * (Socket Mode) or a signing secret (HTTP Events API) are set; builds the Bolt channel with the
 * config's access lists, mention rule, file limit and HTTP endpoint — and, with several processes on
 * one store, shares each person's latest thread per channel (what /coworker acts on) in the store's
 * sessions space. How it is started and registered is the same for every platform (channel-starter.ts),
 * with each person's stop announced to the other processes (AdapterBase.laneStops).
 */
import type { SlackChannel, SlackChannelOptions } from "../channels/slack/slack-channel.js";
import type { CoworkerConfig } from "../config/schema.js";
import type { AdapterBase, AdapterFactory } from "./channel-starter.js";
import type { ChannelContext } from "./app-parts.js";

function hasCredentials(config: CoworkerConfig): boolean {
  const { bot_token, app_token, signing_secret } = config.slack;
  return bot_token !== undefined && (app_token !== undefined || signing_secret !== undefined);
}

/** The HTTP receiver's endpoint from `slack.http`: all interfaces unless `host` is set. */
export function httpOptions(http: CoworkerConfig["slack"]["http"]): NonNullable<SlackChannelOptions["http"]> {
  return { port: http.port, path: http.path, ...(http.host !== undefined ? { host: http.host } : {}) };
}

async function create(context: ChannelContext, base: AdapterBase): Promise<SlackChannel> {
  const section = context.config.slack;
  if (section.bot_token === undefined) throw new Error("slack.bot_token is not set");
  // Bolt loads only when Slack is configured.
  const { SlackChannel } = await import("../channels/slack/slack-channel.js");
  return new SlackChannel({
    ...base,
    botToken: section.bot_token,
    ...(section.app_token !== undefined ? { appToken: section.app_token } : {}),
    ...(section.signing_secret !== undefined ? { signingSecret: section.signing_secret } : {}),
    apiUrl: section.api_url,
    http: httpOptions(section.http),
    requireMentionInThreads: section.require_mention_in_threads,
    allowedUsers: section.allowed_users,
    allowedChannels: section.allowed_channels,
    allowedBots: section.allowed_bots,
    fileMaxBytes: section.file_max_bytes,
    allowExternal: section.allow_external,
    allowGuests: section.allow_guests,
    // Several processes on one store: a person's latest threads are shared.
    ...(context.coordination.distributed ? { sharedLatestThreads: context.store.space("sessions") } : {}),
  });
}

/** Slack as the app builds it from the config. */
export const slackAdapter: AdapterFactory = { platform: "slack", hasCredentials, create };
