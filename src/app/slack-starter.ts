/**
 * Joins the Slack channel to the app: configured when a bot token and either an app token
 * (Socket Mode) or a signing secret (HTTP Events API) are set; starts the Bolt channel on the
 * session layer with the config's access lists, mention rule and file limit, and registers its
 * Messenger (send_message / send_file), which finds other channels through the Slack directory.
 * Channel subscriptions hear every channel message and the bot's removal from channels, and get
 * the same directory once the bot's identity is known.
 */
import type { SlackChannel } from "../channels/slack/slack-channel.js";
import type { ChannelResolver } from "../channels/slack/slack-messenger.js";
import type { CoworkerConfig } from "../config/schema.js";
import { attachmentIntakeFromConfig } from "./attachment-intake.js";
import type { SlackDirectory } from "../subscriptions/platforms/slack-directory.js";
import type { ChannelContext, ChannelStarter, RunningChannel } from "./app-parts.js";
import type { AppSchedules } from "./app-schedules.js";
import type { AppSubscriptions } from "./app-subscriptions.js";
import type { MessengerRegistry } from "./messenger-registry.js";
import { startOrStop } from "./start-or-stop.js";

/** The platform name the Slack channel registers under. */
export const SLACK_PLATFORM = "slack";

function hasCredentials(config: CoworkerConfig): boolean {
  const { bot_token, app_token, signing_secret } = config.slack;
  return bot_token !== undefined && (app_token !== undefined || signing_secret !== undefined);
}

/** The bot's Slack directory; throws until the channel has started and knows who the bot is. */
export async function slackDirectoryOf(channel: SlackChannel): Promise<SlackDirectory> {
  const bot = channel.bot;
  if (!bot) throw new Error("Slack is not connected yet");
  const { SlackDirectory } = await import("../subscriptions/platforms/slack-directory.js");
  return new SlackDirectory(channel.apiClient, {
    workspace: bot.teamId,
    botUserId: bot.userId,
    botName: bot.name,
  });
}

/** A resolver usable before the channel starts (the Messenger is registered first). */
function directoryResolver(): { resolver: ChannelResolver; set(directory: SlackDirectory): void } {
  let directory: SlackDirectory | undefined;
  return {
    resolver: {
      resolveChannel: async (ref) => {
        if (!directory) throw new Error("Slack is not connected yet");
        return directory.resolveChannel(ref);
      },
    },
    set: (started) => {
      directory = started;
    },
  };
}

async function start(
  context: ChannelContext,
  messengers: MessengerRegistry,
  subscriptions: AppSubscriptions,
  schedules: AppSchedules | undefined,
  signal?: AbortSignal,
): Promise<RunningChannel> {
  const { config } = context;
  const section = config.slack;
  if (section.bot_token === undefined) throw new Error("slack.bot_token is not set");
  const socketMode = section.app_token !== undefined;
  // Bolt loads only when Slack is configured.
  const { SlackChannel } = await import("../channels/slack/slack-channel.js");
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
    allowExternal: section.allow_external,
    workspaceRoot: config.workspace.root,
    attachments: attachmentIntakeFromConfig(config, context.logger),
    service: context.service,
    logger: context.logger,
    ...subscriptions.channelHooks,
    onBotRemoved: (channel) => {
      subscriptions.channelHooks.onBotRemoved(channel);
      schedules?.channelGone(channel);
    },
  });
  const directory = directoryResolver();
  messengers.register(SLACK_PLATFORM, channel.messenger(directory.resolver));
  await startOrStop(channel, signal);
  const started = await slackDirectoryOf(channel);
  directory.set(started);
  subscriptions.registerDirectory(started);
  const { slackTimezones } = await import("../channels/slack/slack-timezones.js");
  const timezoneOf = slackTimezones(channel.apiClient);
  schedules?.registerTimezones(SLACK_PLATFORM, (_target, userId) => timezoneOf(userId));
  return {
    description: socketMode
      ? "slack (socket mode)"
      : `slack (http :${section.http.port}${section.http.path})`,
    connected: () => channel.isReady(),
    stopIntake: () => channel.stop(),
    close: () => channel.stop(),
  };
}

/**
 * The Slack ChannelStarter; its Messenger goes into `messengers`, its hooks to `subscriptions`
 * and `schedules` (which also learn people's timezones from Slack).
 */
export function slackStarter(
  messengers: MessengerRegistry,
  subscriptions: AppSubscriptions,
  schedules?: AppSchedules,
): ChannelStarter {
  return {
    platform: SLACK_PLATFORM,
    hasCredentials,
    start: (context, signal) => start(context, messengers, subscriptions, schedules, signal),
  };
}
