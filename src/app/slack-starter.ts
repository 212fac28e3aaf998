/**
 * The Slack platform's part of the app: configured when a bot token and either an app token
 * (Socket Mode) or a signing secret (HTTP Events API) are set; builds the Bolt channel with the
 * config's access lists, mention rule, file limit and HTTP endpoint. How it is started and
 * registered is the same for every platform (channel-starter.ts).
 */
import type { SlackChannel } from "../channels/slack/slack-channel.js";
import type { CoworkerConfig } from "../config/schema.js";
import type { AdapterBase, AdapterFactory } from "./channel-starter.js";
import type { ChannelContext } from "./app-parts.js";

function hasCredentials(config: CoworkerConfig): boolean {
  const { bot_token, app_token, signing_secret } = config.slack;
  return bot_token !== undefined && (app_token !== undefined || signing_secret !== undefined);
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
    http: { port: section.http.port, path: section.http.path },
    requireMentionInThreads: section.require_mention_in_threads,
    allowedUsers: section.allowed_users,
    allowedChannels: section.allowed_channels,
    allowedBots: section.allowed_bots,
    fileMaxBytes: section.file_max_bytes,
    allowExternal: section.allow_external,
    allowGuests: section.allow_guests,
  });
}

/** Slack as the app builds it from the config. */
export const slackAdapter: AdapterFactory = { platform: "slack", hasCredentials, create };
