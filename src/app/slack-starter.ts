/**
 * Joins the Slack channel to the app: configured when a bot token and either an app token
 * (Socket Mode) or a signing secret (HTTP Events API) are set; starts the Bolt channel on the
 * session layer with the config's access lists, mention rule and file limit, and registers its
 * Messenger (send_message / send_file), which finds other channels through the Slack directory.
 */
import { SlackChannel } from "../channels/slack/slack-channel.js";
import type { ChannelResolver } from "../channels/slack/slack-messenger.js";
import type { CoworkerConfig } from "../config/schema.js";
import { SlackDirectory } from "../subscriptions/platforms/slack-directory.js";
import type { ChannelContext, ChannelStarter, RunningChannel } from "./app-parts.js";
import type { MessengerRegistry } from "./messenger-registry.js";

/** The platform name the Slack channel registers under. */
export const SLACK_PLATFORM = "slack";

function hasCredentials(config: CoworkerConfig): boolean {
  const { bot_token, app_token, signing_secret } = config.slack;
  return bot_token !== undefined && (app_token !== undefined || signing_secret !== undefined);
}

/** Build the bot's Slack directory once the channel knows who the bot is. */
async function directoryOf(channel: SlackChannel): Promise<SlackDirectory> {
  const bot = channel.bot;
  if (!bot) throw new Error("Slack is not connected yet");
  const auth = await channel.apiClient.auth.test();
  return new SlackDirectory(channel.apiClient, {
    workspace: bot.teamId,
    botUserId: bot.userId,
    botName: auth.user ?? bot.userId,
  });
}

/**
 * A channel resolver usable before the channel has started (so the Messenger is in place before
 * any message arrives): the directory is built on the first lookup, and again after a failure.
 */
function lazyResolver(channel: SlackChannel): ChannelResolver {
  let directory: Promise<SlackDirectory> | undefined;
  return {
    resolveChannel: async (ref) => {
      directory ??= directoryOf(channel).catch((error: unknown) => {
        directory = undefined;
        throw error;
      });
      return (await directory).resolveChannel(ref);
    },
  };
}

async function start(context: ChannelContext, messengers: MessengerRegistry): Promise<RunningChannel> {
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
  messengers.register(SLACK_PLATFORM, channel.messenger(lazyResolver(channel)));
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

/** The Slack ChannelStarter; its Messenger goes into `messengers`. */
export function slackStarter(messengers: MessengerRegistry): ChannelStarter {
  return {
    platform: SLACK_PLATFORM,
    hasCredentials,
    start: (context) => start(context, messengers),
  };
}
