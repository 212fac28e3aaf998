/**
 * SlackChannel: Coworker in Slack, on the real @slack/bolt App. Socket Mode when an app token is
 * given (no public URL needed), the HTTP Events API otherwise (Bolt verifies the signatures).
 * `apiUrl` points the Web API — and through apps.connections.open the Socket Mode client — at a
 * Slack-compatible gateway or a local fake. Every event, action and command is acknowledged at
 * once; turns run in the session layer after the ack. The channel registers its ThreadOutput
 * factory with the session layer, so it can reach any thread, also after a restart.
 */
import { App, HTTPReceiver, SocketModeReceiver } from "@slack/bolt";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import { z } from "zod";
import type { ConversationService } from "../../sessions/contracts.js";
import type { ThreadTarget } from "../../core/thread-target.js";
import type { ObservedMessage } from "../../subscriptions/observed-message.js";
import { AccessPolicy } from "./slack-access.js";
import {
  createClients,
  describeError,
  type SlackClients,
  type WebClient,
  withTrailingSlash,
} from "./slack-api.js";
import { CapabilityLatch } from "./slack-capabilities.js";
import { SocketHealth } from "./slack-connection.js";
import type { BotIdentity } from "./slack-events.js";
import { listenFailure, slackFailure } from "./slack-failure.js";
import { AttachmentIntake } from "../../attachments/inbound-attachments.js";
import { SlackInbound } from "./slack-inbound.js";
import { type Installation, screenSlackBody } from "./slack-intake.js";
import { guardHttpReceiver, guardSocketMode, type Screen } from "./slack-intake-guard.js";
import { SlackInteractions } from "./slack-interactions.js";
import { type ChannelResolver, SlackMessenger } from "./slack-messenger.js";
import { missingScopes } from "./slack-requirements.js";
import { sdkLogger } from "./slack-logger.js";
import { DEFAULT_RENDER_SETTINGS, type RenderSettings } from "./slack-renderer.js";
import { SlackThreadOutput } from "./slack-thread-output.js";
import { ThreadRegistry } from "./slack-threads.js";
import { UserDirectory } from "./slack-users.js";
import { IntakeLog } from "../intake-log.js";

const optionsSchema = z
  .object({
    botToken: z.string().min(1, "a bot token (xoxb-…) is required"),
    appToken: z.string().min(1).optional(),
    signingSecret: z.string().min(1).optional(),
    apiUrl: z.url().optional(),
    http: z
      .object({
        port: z.number().int().min(0).max(65_535),
        path: z.string().startsWith("/"),
        host: z.string().optional(),
      })
      .optional(),
    requireMentionInThreads: z.boolean(),
    allowedUsers: z.array(z.string()),
    allowedChannels: z.array(z.string()),
    allowedBots: z.array(z.string()),
    fileMaxBytes: z.number().int().positive(),
    workspaceRoot: z.string().min(1),
    allowExternal: z.boolean().optional(),
  })
  .refine((o) => o.appToken !== undefined || o.signingSecret !== undefined, {
    message: "Slack needs an app token (Socket Mode) or a signing secret (HTTP Events API)",
  });

export interface SlackChannelOptions {
  readonly botToken: string;
  /** xapp-… token: Socket Mode. Without it, the HTTP Events API with `signingSecret`. */
  readonly appToken?: string;
  readonly signingSecret?: string;
  /** Web API base URL (SLACK_API_URL); default https://slack.com/api/. */
  readonly apiUrl?: string;
  /** HTTP mode: where Bolt listens (default port 3000, path /slack/events, all interfaces). */
  readonly http?: { readonly port: number; readonly path: string; readonly host?: string };
  readonly requireMentionInThreads: boolean;
  readonly allowedUsers: readonly string[];
  readonly allowedChannels: readonly string[];
  /** Bot ids or names whose messages are handled like a person's. */
  readonly allowedBots: readonly string[];
  readonly fileMaxBytes: number;
  /** Absolute workspace path; uploads land in <workspaceRoot>/uploads/<session>/. */
  readonly workspaceRoot: string;
  /** Serve deliveries from other teams and enterprises (Slack Connect); refused by default. */
  readonly allowExternal?: boolean;
  /** What saved files become for the model; default caps and no transcription when absent. */
  readonly attachments?: AttachmentIntake;
  readonly service: ConversationService;
  readonly logger: Logger;
  /** Socket Mode health tuning (defaults: pong 5 s, server ping 30 s, watchdog 5 min). */
  readonly socket?: {
    readonly clientPingTimeoutMs?: number;
    readonly serverPingTimeoutMs?: number;
    readonly watchdogMs?: number;
  };
  /** Rendering tuning (edit interval, status refresh, native streaming on/off, stream budget). */
  readonly render?: Partial<RenderSettings>;
  /** Told about every message seen in a channel, for subscriptions (SubscriptionService.observe). */
  readonly observe?: (message: ObservedMessage) => Promise<unknown> | undefined;
  /** Told when the bot left or was removed from a channel (subscriptions there end). */
  readonly onBotRemoved?: (channel: {
    readonly platform: "slack";
    readonly workspace: string;
    readonly channel: string;
  }) => void;
}

export class SlackChannel {
  private readonly options: SlackChannelOptions;
  private readonly logger: Logger;
  private readonly clients: SlackClients;
  private app: App | undefined;
  private health: SocketHealth | undefined;
  private httpServer: Server | undefined;
  private readonly inflight = new Set<Promise<void>>();
  private identity: BotIdentity | undefined;
  private botName = "coworker";

  /** Validates the options; throws a readable error for a bad configuration. */
  constructor(options: SlackChannelOptions) {
    const checked = optionsSchema.safeParse(options);
    if (!checked.success) {
      throw new Error(
        `Invalid Slack configuration: ${checked.error.issues.map((i) => i.message).join("; ")}`,
      );
    }
    this.options = options;
    this.logger = options.logger.child({ channel: "slack" });
    this.clients = createClients({
      token: options.botToken,
      slackApiUrl: options.apiUrl ?? "https://slack.com/api/",
      logger: this.logger,
    });
  }

  /** Who the bot is in Slack, with its handle (known after `start`; the Slack directory needs it). */
  get bot(): (BotIdentity & { readonly name: string }) | undefined {
    return this.identity ? { ...this.identity, name: this.botName } : undefined;
  }

  /** Connect: checks the token (auth.test), registers the thread outputs, starts Bolt. */
  async start(): Promise<void> {
    if (this.app) return;
    const auth = await this.clients.api.auth.test().catch((error: unknown) => {
      throw slackFailure(error, "bot", "auth.test");
    });
    if (!auth.user_id || !auth.team_id) throw new Error("Slack auth.test returned no bot user or team");
    const bot: BotIdentity = { userId: auth.user_id, botId: auth.bot_id ?? "", teamId: auth.team_id };
    const installation: Installation = {
      teamId: auth.team_id,
      ...(auth.enterprise_id ? { enterpriseId: auth.enterprise_id } : {}),
    };
    this.identity = bot;
    if (auth.user) this.botName = auth.user;
    const granted = auth.response_metadata?.scopes;
    const missing = granted ? missingScopes(granted) : [];
    if (missing.length > 0) {
      this.logger.warn(
        { missing },
        "the Slack app lacks scopes Coworker uses; reinstall it from config/slack-app-manifest.yaml",
      );
    }
    const o = this.options;
    const capabilities = new CapabilityLatch();
    const threads = new ThreadRegistry(o.service);
    const users = new UserDirectory(this.clients.api, this.logger);
    const access = new AccessPolicy(o.allowedUsers, o.allowedChannels);
    const settings: RenderSettings = { ...DEFAULT_RENDER_SETTINGS, ...o.render };
    const stopTurn = (target: ThreadTarget, userId: string) =>
      this.track(
        users
          .user(userId)
          .then((user) => o.service.press({ kind: "control", control: "stop", target, user }))
          .then(() => undefined),
      );
    o.service.registerOutput(
      "slack",
      (target) =>
        new SlackThreadOutput(
          { clients: this.clients, capabilities, threads, logger: this.logger, settings, stopTurn },
          target,
        ),
    );
    const inbound = new SlackInbound({
      bot,
      service: o.service,
      clients: this.clients,
      threads,
      users,
      access,
      allowedBots: new Set(o.allowedBots),
      requireMentionInThreads: o.requireMentionInThreads,
      files: { botToken: o.botToken, maxBytes: o.fileMaxBytes, workspaceRoot: o.workspaceRoot },
      attachments:
        o.attachments ?? new AttachmentIntake({ workspaceRoot: o.workspaceRoot, logger: this.logger }),
      logger: this.logger,
      ...(o.observe ? { observe: o.observe } : {}),
    });
    const interactions = new SlackInteractions({
      bot,
      service: o.service,
      clients: this.clients,
      threads,
      users,
      access,
      logger: this.logger,
    });
    const app = this.createApp(bot, installation);
    app.event("app_mention", async ({ event, body }) => this.track(inbound.handle(event, body)));
    app.event("message", async ({ event, body }) => this.track(inbound.handle(event, body)));
    const left = (channel: string, team: string | undefined) => {
      threads.forgetChannel(channel);
      this.logger.info({ slackChannel: channel }, "slack bot left a channel");
      o.onBotRemoved?.({ platform: "slack", workspace: team ?? bot.teamId, channel });
    };
    app.event("member_left_channel", async ({ event, body }) => {
      if (event.user === bot.userId) left(event.channel, event.team || teamOf(body));
    });
    app.event("channel_left", async ({ event, body }) => left(event.channel, teamOf(body)));
    app.event("group_left", async ({ event, body }) => left(event.channel, teamOf(body)));
    const onPress = async ({ ack, body }: { ack: () => Promise<void>; body: unknown }) => {
      await ack();
      this.track(interactions.press(body));
    };
    // Every press is acknowledged, also of buttons this version never posted (old cards, stray
    // clients): interactions.press tells the presser such a button is no longer active.
    app.action(ANY_ACTION, onPress);
    app.command("/coworker", async ({ ack, command, respond }) => {
      await ack();
      this.track(interactions.command(command, respond));
    });
    app.error(async (error) => {
      this.logger.error({ err: describeError(error) }, "slack handler error");
    });
    this.app = app;
    await this.listen(app);
  }

  private createApp(bot: BotIdentity, installation: Installation): App {
    const o = this.options;
    const sdk = sdkLogger(this.logger, "bolt");
    const intake = new IntakeLog(this.logger);
    const allowExternal = o.allowExternal ?? false;
    const screen =
      (http: boolean): Screen =>
      (body) =>
        screenSlackBody(body, installation, { allowExternal, http });
    // A body that still makes Bolt fail is acknowledged, so Slack does not redeliver it.
    const processEventErrorHandler = async ({ error }: { error: Error }) => {
      intake.refused("bolt_processing_failed", { err: describeError(error) });
      return true;
    };
    const clientOptions = { slackApiUrl: withTrailingSlash(o.apiUrl ?? "https://slack.com/api/") };
    const authorize = async () => ({
      botToken: o.botToken,
      botId: bot.botId,
      botUserId: bot.userId,
      teamId: bot.teamId,
    });
    if (o.appToken) {
      const receiver = new SocketModeReceiver({
        appToken: o.appToken,
        logger: sdk,
        installerOptions: { clientOptions },
        clientPingTimeout: o.socket?.clientPingTimeoutMs ?? 5_000,
        serverPingTimeout: o.socket?.serverPingTimeoutMs ?? 30_000,
        processEventErrorHandler,
      });
      guardSocketMode(receiver.client, screen(false), intake);
      this.health = new SocketHealth(receiver.client, this.logger, o.socket?.watchdogMs ?? 300_000);
      return new App({ receiver, authorize, logger: sdk, clientOptions, convoStore: false });
    }
    const receiver = new HTTPReceiver({
      signingSecret: o.signingSecret as string,
      endpoints: o.http?.path ?? "/slack/events",
      logger: sdk,
      processEventErrorHandler,
    });
    guardHttpReceiver(receiver, o.signingSecret as string, screen(true), intake);
    return new App({ receiver, authorize, logger: sdk, clientOptions, convoStore: false });
  }

  private async listen(app: App): Promise<void> {
    if (this.health) {
      await app.start().catch((error: unknown) => {
        throw slackFailure(error, "app", "Socket Mode (apps.connections.open)");
      });
      this.health.watch();
      return;
    }
    const http = this.options.http ?? { port: 3000, path: "/slack/events" };
    const server = (await app
      .start({ port: http.port, ...(http.host ? { host: http.host } : {}) })
      .catch((error: unknown) => {
        throw listenFailure(error, http.port);
      })) as Server;
    this.httpServer = server;
    this.logger.info(
      { port: (server.address() as AddressInfo).port, path: http.path },
      "slack http events listening",
    );
  }

  /** The Web API client the channel posts with (for the Slack directory of subscriptions). */
  get apiClient(): WebClient {
    return this.clients.api;
  }

  /** send_message / send_file for Slack sessions; `resolver` finds channels by name. */
  messenger(resolver: ChannelResolver): SlackMessenger {
    return new SlackMessenger({
      clients: this.clients,
      resolver,
      botName: () => this.botName,
      logger: this.logger,
    });
  }

  /** Where the HTTP receiver listens (HTTP mode, after start). */
  address(): AddressInfo | undefined {
    const address = this.httpServer?.address();
    return typeof address === "object" && address !== null ? address : undefined;
  }

  /** Connected (Socket Mode) or listening (HTTP). */
  isReady(): boolean {
    if (!this.app) return false;
    if (this.health) return this.health.isReady();
    return this.httpServer?.listening === true;
  }

  /** For readiness details: the Socket Mode state, "listening" (HTTP), or "stopped". */
  connectionState(): string {
    if (!this.app) return "stopped";
    if (this.health) return this.health.current();
    return this.httpServer?.listening ? "listening" : "stopped";
  }

  /** Disconnect and wait for in-flight handlers (turns keep running in the session layer). */
  async stop(): Promise<void> {
    const app = this.app;
    if (!app) return;
    this.app = undefined;
    this.health?.stop();
    await app
      .stop()
      .catch((error: unknown) => this.logger.warn({ err: describeError(error) }, "slack stop failed"));
    await Promise.allSettled([...this.inflight]);
    this.httpServer = undefined;
  }

  private track(work: Promise<void>): void {
    const tracked = work.catch((error: unknown) => {
      this.logger.error({ err: describeError(error) }, "slack background work failed");
    });
    this.inflight.add(tracked);
    void tracked.finally(() => this.inflight.delete(tracked));
  }
}

/** Matches every action id (see the registration in `start`). */
const ANY_ACTION = /^/;

/** The team of an Events API delivery, when the envelope names one. */
function teamOf(body: unknown): string | undefined {
  const team = (body as { team_id?: unknown } | undefined)?.team_id;
  return typeof team === "string" && team.length > 0 ? team : undefined;
}
