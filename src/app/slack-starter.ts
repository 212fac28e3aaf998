/**
 * Joins the Slack channel to the app: configured when a bot token and either an app token
 * (Socket Mode) or a signing secret (HTTP Events API) are set; starts the Bolt channel on the
 * session layer with the config's access lists, mention rule and file limit.
 */
import { SlackChannel } from "../channels/slack/slack-channel.js";
import type { CoworkerConfig } from "../config/schema.js";
import type { ChannelContext, ChannelStarter, RunningChannel } from "./app-parts.js";

/** The platform name the Slack channel registers under. */
export const SLACK_PLATFORM = "slack";

function hasCredentials(config: CoworkerConfig): boolean {
  const { bot_token, app_token, signing_secret } = config.slack;
  return bot_token !== undefined && (app_token !== undefined || signing_secret !== undefined);
}

async function start(context: ChannelContext): Promise<RunningChannel> {
  const { config } = context;
  const section = config.slack;
  if (section.bot_token === undefined) throw new Error("slack.bot_token is not set");
  const socketMode = section.app_token !== undefined;
  const channel = new SlackChannel({
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
    workspaceRoot: config.workspace.root,
    service: context.service,
    logger: context.logger,
  });
  await channel.start();
  return {
    description: socketMode
      ? "slack (socket mode)"
      : `slack (http :${section.http.port}${section.http.path})`,
    connected: () => channel.isReady(),
    stopIntake: () => channel.stop(),
    close: () => channel.stop(),
  };
}

/** The Slack ChannelStarter. */
export const slackStarter: ChannelStarter = {
  platform: SLACK_PLATFORM,
  hasCredentials,
  start,
};
