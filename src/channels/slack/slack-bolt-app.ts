/**
 * The Bolt App one run of the Slack channel is built on, and how Slack's deliveries reach the
 * channel through it: the App sits on the channel's receiver with every delivery screened first
 * (our installation only, other teams by choice: slack-intake.ts), is authorized as the one bot
 * `start` found, and routes each delivery to the channel's listeners (a handled event, a button
 * press, /coworker), acknowledging at once and handing the work on. Kept
 * apart from slack-channel.ts so the adapter reads as what it offers (thread outputs, directory,
 * access, lifecycle) and this file as the Bolt wiring in front of it.
 */
import { App } from "@slack/bolt";
import type { Logger } from "pino";
import { IntakeLog } from "../intake-log.js";
import { describeError } from "./slack-api.js";
import type { BotIdentity } from "./slack-events.js";
import type { EventEnvelope } from "./slack-inbound.js";
import { type Installation, SLASH_COMMAND, screenSlackBody } from "./slack-intake.js";
import type { Respond } from "./slack-interactions.js";
import { sdkLogger } from "./slack-logger.js";
import type { SlackReceiver } from "./slack-receiver.js";

/** What the App is built from: one run's receiver, bot and installation. */
export interface BoltAppOptions {
  readonly receiver: SlackReceiver;
  readonly bot: BotIdentity;
  readonly installation: Installation;
  readonly botToken: string;
  /** The Web API base URL with a trailing slash, as Bolt and the Socket Mode client want it. */
  readonly apiUrl: string;
  /** Serve deliveries from other teams and enterprises (Slack Connect). */
  readonly allowExternal: boolean;
  readonly logger: Logger;
}

/** Where acknowledged deliveries go; each starts the work and returns at once. */
export interface BoltListeners {
  /** A message or a mention. */
  message(event: unknown, envelope: EventEnvelope): void;
  /** The bot left `channel`, or was removed from it. */
  left(channel: string): void;
  /** A button press (already acknowledged). */
  press(body: unknown): void;
  /** A /coworker command (already acknowledged). */
  command(command: unknown, respond: Respond): void;
}

/** The App for one run, routing deliveries to `listeners`; the receiver's `listen` starts it. */
export function createBoltApp(options: BoltAppOptions, listeners: BoltListeners): App {
  const { bot, logger } = options;
  const app = newApp(options);
  // One middleware routes every delivery, after Bolt's ignoreSelf: Bolt runs each listener's own
  // middleware chain for every delivery, and slack-intake.ts has already let through only the
  // kinds routed here (the handled events, button presses, /coworker), so no listener chain is needed.
  app.use(async (args) => {
    // Bolt takes a body's kind from the first field it finds (`event`, then `command`, then
    // `actions`), slack-intake.ts from its `type`: a body goes only to the listener of the kind it
    // was screened as, never with an event or command riding in it that nothing screened.
    const type = (args.body as { readonly type?: unknown }).type;
    if ("event" in args) {
      if (type !== "event_callback") return;
      const { event, body } = args;
      switch (event.type) {
        case "app_mention":
        case "message":
          listeners.message(event, body);
          return;
        case "member_left_channel":
          if (event.user === bot.userId) listeners.left(event.channel);
          return;
        case "channel_left":
        case "group_left":
          listeners.left(event.channel);
          return;
      }
    } else if ("action" in args) {
      // Every press is acknowledged, also of buttons this version never posted (old cards, stray
      // clients): interactions.press tells the presser such a button is no longer active.
      await args.ack();
      listeners.press(args.body);
    } else if ("command" in args) {
      await args.ack();
      if (type === undefined && args.command.command === SLASH_COMMAND)
        listeners.command(args.command, args.respond);
    }
  });
  app.error(async (error) => {
    logger.error({ err: describeError(error) }, "slack handler error");
  });
  return app;
}

/** The App on the receiver, every delivery screened, authorized as the bot. */
function newApp(options: BoltAppOptions): App {
  const { bot, installation, allowExternal } = options;
  const sdk = sdkLogger(options.logger, "bolt");
  const log = new IntakeLog(options.logger);
  const receiver = options.receiver.open({
    screenFor: (http) => (body) => screenSlackBody(body, installation, { allowExternal, http }),
    log,
    // A body that still makes Bolt fail is acknowledged, so Slack does not redeliver it.
    processEventErrorHandler: async ({ error }) => {
      log.refused("bolt_processing_failed", { err: describeError(error) });
      return true;
    },
  });
  const clientOptions = { slackApiUrl: options.apiUrl };
  const authorize = async () => ({
    botToken: options.botToken,
    botId: bot.botId,
    botUserId: bot.userId,
    teamId: bot.teamId,
  });
  return new App({ receiver, authorize, logger: sdk, clientOptions, convoStore: false });
}
