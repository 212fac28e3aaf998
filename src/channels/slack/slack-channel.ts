/**
 * SlackChannel: Coworker in Slack, on the real @slack/bolt App — the Slack ChannelAdapter. How
 * Slack delivers is the receiver's business (slack-receiver.ts): Socket Mode when an app token
 * is given (no public URL needed), the HTTP Events API otherwise (Bolt verifies the signatures).
 * `apiUrl` points the Web API — and through apps.connections.open the Socket Mode client — at a
 * Slack-compatible gateway or a local fake. Every event, action and command is acknowledged at
 * once (the Bolt wiring: slack-bolt-app.ts); turns run in the session layer after the ack. Its
 * thread outputs work before `start` (the Web API needs no connection), so the session layer can
 * reach any thread, also after a restart.
 */
import type { App } from "@slack/bolt";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import { z } from "zod";
import { AttachmentIntake } from "../../attachments/inbound-attachments.js";
import type { ThreadTarget } from "../../core/thread-target.js";
import type { ConversationService } from "../../sessions/contracts.js";
import type { KeyValueSpace } from "../../store/store.js";
import type { ChannelAdapter, ChannelHealth, ChannelHooks, InboundFileOptions } from "../channel-adapter.js";
import { createWorkspacePaths } from "../../tools/files/workspace-paths.js";
import type { LaneStopOptions } from "../shared/hand-over-lanes.js";
import { laneStopsOf, type LaneStopsOption } from "../shared/lane-stop-broadcast.js";
import { AccessPolicy } from "./slack-access.js";
import { createClients, describeError, type SlackClients, withTrailingSlash } from "./slack-api.js";
import { createBoltApp } from "./slack-bolt-app.js";
import { slackBotUsers } from "./slack-bot-users.js";
import { CapabilityLatch } from "./slack-capabilities.js";
import { mayActInSlack } from "./slack-may-act.js";
import { SlackDirectory } from "./slack-directory.js";
import type { BotIdentity } from "./slack-events.js";
import { slackFailure } from "./slack-failure.js";
import { LatestThreads } from "./slack-latest-threads.js";
import { HttpReceiver } from "./slack-http-receiver.js";
import { SlackInbound } from "./slack-inbound.js";
import type { Installation } from "./slack-intake.js";
import { SlackInteractions } from "./slack-interactions.js";
import { SlackMessenger } from "./slack-messenger.js";
import type { SlackReceiver } from "./slack-receiver.js";
import { missingScopes } from "./slack-requirements.js";
import { SocketReceiver } from "./slack-socket-receiver.js";
import { DEFAULT_RENDER_SETTINGS, type RenderSettings } from "./slack-renderer.js";
import { SlackThreadOutput } from "./slack-thread-output.js";
import { ThreadRegistry } from "./slack-threads.js";
import { slackTimezones } from "./slack-timezones.js";
import { UserDirectory } from "./slack-users.js";

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
    allowGuests: z.boolean().optional(),
    laneStop: z.object({ withinMs: z.number().int().nonnegative().optional() }).optional(),
  })
  .refine((o) => o.appToken !== undefined || o.signingSecret !== undefined, {
    message: "Slack needs an app token (Socket Mode) or a signing secret (HTTP Events API)",
  });

export interface SlackChannelOptions extends InboundFileOptions, ChannelHooks, LaneStopsOption {
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
  /** Bot ids (B…) or bot user ids (U…) whose messages are handled like a person's. */
  readonly allowedBots: readonly string[];
  /** Serve deliveries from other teams and enterprises (Slack Connect); refused by default. */
  readonly allowExternal?: boolean;
  /** Serve the workspace's guests when no user list is set (refused by default: slack-access.ts). */
  readonly allowGuests?: boolean;
  readonly service: ConversationService;
  readonly logger: Logger;
  /** Socket Mode health tuning (defaults: pong 5 s, server ping 30 s, watchdog 5 min, main thread silence 10 s). */
  readonly socket?: {
    readonly clientPingTimeoutMs?: number;
    readonly serverPingTimeoutMs?: number;
    readonly watchdogMs?: number;
    readonly mainSilenceMs?: number;
  };
  /** Rendering tuning (edit interval, status refresh, native streaming on/off, stream budget). */
  readonly render?: Partial<RenderSettings>;
  /** How long `stop` waits for messages whose files are still being read (hand-over-lanes.ts). */
  readonly laneStop?: LaneStopOptions;
  /**
   * Several processes on one store: where each person's latest thread per channel (the target of
   * /coworker there) is shared, so a command acts on it whichever process saw it. Memory without.
   */
  readonly sharedLatestThreads?: KeyValueSpace;
}

/** The Slack ChannelAdapter (see the module comment). */
export class SlackChannel implements ChannelAdapter {
  readonly platform = "slack";
  readonly description: string;
  /** send_message / send_file for Slack sessions; other channels are found through the directory. */
  readonly messenger: SlackMessenger;
  private readonly options: SlackChannelOptions;
  private readonly logger: Logger;
  private readonly clients: SlackClients;
  /** The Web API base URL with a trailing slash, as Bolt and the Socket Mode client want it. */
  private readonly boltApiUrl: string;
  private readonly receiver: SlackReceiver;
  private readonly capabilities = new CapabilityLatch();
  private readonly threads: ThreadRegistry;
  private readonly latest: LatestThreads;
  private readonly users: UserDirectory;
  private readonly access: AccessPolicy;
  private readonly settings: RenderSettings;
  private readonly timezones: (userId: string) => Promise<string | undefined>;
  private readonly botUsers: (botId: string) => Promise<string | undefined>;
  private app: App | undefined;
  private inbound: SlackInbound | undefined;
  private readonly inflight = new Set<Promise<void>>();
  private identity: BotIdentity | undefined;
  /** The team (and enterprise) the bot is installed in, known after `start` (auth.test). */
  private installation: Installation | undefined;
  private slackDirectory: SlackDirectory | undefined;
  private botName = "coworker";

  /** Validates the options and picks the receiver; throws a readable error for a bad configuration. */
  constructor(options: SlackChannelOptions) {
    const checked = optionsSchema.safeParse(options);
    if (!checked.success) {
      throw new Error(
        `Invalid Slack configuration: ${checked.error.issues.map((i) => i.message).join("; ")}`,
      );
    }
    this.options = options;
    this.logger = options.logger.child({ channel: "slack" });
    const slackApiUrl = options.apiUrl ?? "https://slack.com/api/";
    this.clients = createClients({ token: options.botToken, slackApiUrl, logger: this.logger });
    this.boltApiUrl = withTrailingSlash(slackApiUrl);
    this.receiver = receiverFor(options, this.boltApiUrl, this.logger);
    this.description = `slack (${this.receiver.description})`;
    this.latest = new LatestThreads({
      workspace: () => this.identity?.teamId,
      ...(options.sharedLatestThreads ? { shared: options.sharedLatestThreads } : {}),
      logger: this.logger,
    });
    this.threads = new ThreadRegistry(options.service, this.latest);
    const users = new UserDirectory(this.clients.api, this.logger, () => this.installation);
    this.users = users;
    this.access = new AccessPolicy(
      options.allowedUsers,
      options.allowedChannels,
      { allow: options.allowGuests ?? false, account: (id) => users.account(id) },
      options.allowedBots,
    );
    this.settings = { ...DEFAULT_RENDER_SETTINGS, ...options.render };
    this.timezones = slackTimezones(this.clients.api);
    this.botUsers = slackBotUsers(this.clients.api);
    this.messenger = new SlackMessenger({
      clients: this.clients,
      directory: () => this.directory(),
      botName: () => this.botName,
      logger: this.logger,
    });
  }

  /** Who the bot is in Slack, with its handle (known after `start`). */
  get bot(): (BotIdentity & { readonly name: string }) | undefined {
    return this.identity ? { ...this.identity, name: this.botName } : undefined;
  }

  /** The thread output for `target`, on the channel's clients, thread registry and render settings. */
  outputFor(target: ThreadTarget): SlackThreadOutput {
    const o = this.options;
    // Like the Stop button: what the person has waiting in the thread's lane goes too, dropped as
    // stopLane is called; the turn is stopped without waiting for the note telling them so.
    const stopTurn = (stopped: ThreadTarget, userId: string) => {
      const laneStopped = this.inbound?.stopLane(stopped, userId);
      const turnStopped = this.users
        .user(userId)
        .then((user) => o.service.press({ kind: "control", control: "stop", target: stopped, user }));
      this.track(Promise.all([turnStopped, laneStopped]).then(() => undefined));
    };
    return new SlackThreadOutput(
      {
        clients: this.clients,
        capabilities: this.capabilities,
        threads: this.threads,
        logger: this.logger,
        settings: this.settings,
        stopTurn,
      },
      target,
    );
  }

  /**
   * Connect: checks the token (auth.test), hears the other processes' stops, then starts Bolt on
   * the receiver; a start that fails there is stopped, so the next attempt starts afresh.
   */
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
    this.installation = installation;
    this.slackDirectory = undefined;
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
    const { threads, users, access } = this;
    // One view of the workspace for saving what people send and reading it back, narrowed for each
    // message to its conversation's (conversation-paths.ts): another's uploads are never reached.
    const workspace = createWorkspacePaths({ root: o.workspaceRoot, offLimits: o.serviceFiles ?? [] });
    const inbound = new SlackInbound({
      bot,
      service: o.service,
      clients: this.clients,
      threads,
      users,
      access,
      allowedBots: new Set(o.allowedBots),
      requireMentionInThreads: o.requireMentionInThreads,
      files: {
        botToken: o.botToken,
        apiUrl: this.boltApiUrl,
        maxBytes: o.fileMaxBytes,
        workspace,
        uploads: o.uploads,
      },
      attachments: o.attachments ?? new AttachmentIntake({ workspace, logger: this.logger }),
      logger: this.logger,
      ...(o.observe ? { observe: o.observe } : {}),
      ...(o.observeChange ? { observeChange: o.observeChange } : {}),
      laneStop: o.laneStop,
      stopsElsewhere: laneStopsOf(o, this.platform, this.logger),
    });
    this.inbound = inbound;
    const interactions = new SlackInteractions({
      bot,
      service: o.service,
      clients: this.clients,
      latest: this.latest,
      users,
      access,
      logger: this.logger,
      stopLane: (target, userId) => inbound.stopLane(target, userId),
    });
    const app = createBoltApp(
      {
        receiver: this.receiver,
        bot,
        installation,
        botToken: o.botToken,
        apiUrl: this.boltApiUrl,
        allowExternal: o.allowExternal ?? false,
        logger: this.logger,
      },
      {
        message: (event, envelope) => this.track(inbound.handle(event, envelope)),
        // The workspace as every target of this channel names it: the installation's team.
        left: (channel) => {
          threads.forgetChannel(channel);
          this.logger.info({ slackChannel: channel }, "slack bot left a channel");
          o.onBotRemoved?.({ platform: "slack", workspace: bot.teamId, channel });
        },
        press: (body) => this.track(interactions.press(body)),
        command: (command, respond) => this.track(interactions.command(command, respond)),
      },
    );
    this.app = app;
    try {
      await inbound.listen();
      await this.receiver.listen(app);
    } catch (error) {
      // Undone here, and only here (startOrStop stops only an abandoned attempt), so the
      // supervisor's next attempt starts again from scratch.
      await this.stop();
      throw error;
    }
  }

  /** The workspace's directory for subscriptions (after `start`: the bot's identity is known). */
  directory(): SlackDirectory {
    const bot = this.bot;
    if (!bot) throw new Error("Slack is not connected yet");
    this.slackDirectory ??= new SlackDirectory(this.clients.api, {
      workspace: bot.teamId,
      botUserId: bot.userId,
      botName: bot.name,
    });
    return this.slackDirectory;
  }

  /** A person's timezone from users.info, cached (for scheduled tasks). */
  timezoneOf(userId: string): Promise<string | undefined> {
    return this.timezones(userId);
  }

  /** Whether the person may still act in `target`'s conversation (slack-may-act.ts). */
  mayAct(userId: string, target: ThreadTarget): Promise<boolean> {
    return mayActInSlack(
      {
        users: this.users,
        access: this.access,
        directory: () => this.directory(),
        botUser: this.botUsers,
      },
      userId,
      target,
    );
  }

  /** Where the HTTP receiver listens (HTTP mode, after start). */
  address(): AddressInfo | undefined {
    return this.receiver.address();
  }

  /** Connected (Socket Mode) or listening (HTTP); "stopped" before start and after stop. */
  health(): ChannelHealth {
    return this.app ? this.receiver.health() : { ready: false, state: "stopped" };
  }

  /**
   * Disconnect and wait for in-flight handlers, and for messages whose files are still being read
   * for a few seconds at most (those left are dropped, each one's sender told in its thread to send
   * it again); turns keep running in the session layer.
   */
  async stop(): Promise<void> {
    const app = this.app;
    if (!app) return;
    this.app = undefined;
    this.receiver.close();
    await app
      .stop()
      .catch((error: unknown) => this.logger.warn({ err: describeError(error) }, "slack stop failed"));
    await Promise.allSettled([...this.inflight, this.inbound?.stop()]);
  }

  private track(work: Promise<void>): void {
    const tracked = work.catch((error: unknown) => {
      this.logger.error({ err: describeError(error) }, "slack background work failed");
    });
    this.inflight.add(tracked);
    void tracked.finally(() => this.inflight.delete(tracked));
  }
}

/** Socket Mode when an app token is given, the HTTP Events API otherwise. */
function receiverFor(options: SlackChannelOptions, slackApiUrl: string, logger: Logger): SlackReceiver {
  if (options.appToken !== undefined) {
    return new SocketReceiver({
      appToken: options.appToken,
      slackApiUrl,
      logger,
      ...options.socket,
    });
  }
  const http = options.http ?? { port: 3000, path: "/slack/events" };
  return new HttpReceiver({ signingSecret: options.signingSecret as string, ...http, logger });
}
