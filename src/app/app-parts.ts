/**
 * The shapes `startApp` assembles the running service from: the context every part receives,
 * the conversation service factory (sessions + engine), and channel starters (Slack, Telegram,
 * the console fallback). New modules plug in through `AppAssembly` in src/app/assembly.ts.
 */
import type { Readable, Writable } from "node:stream";
import type { UploadGate } from "../attachments/upload-gate.js";
import type { CoworkerConfig } from "../config/schema.js";
import type { Logger } from "../logging/logger.js";
import type { Metrics } from "../ops/metrics.js";
import type { Readiness } from "../ops/readiness.js";
import type { Shutdown } from "../ops/shutdown.js";
import type { ConversationService } from "../sessions/contracts.js";
import type { Coordination } from "../store/coordination/coordination.js";
import type { SlotBudget } from "../store/slot-budget.js";
import type { Store } from "../store/store.js";
import type { SandboxBackend } from "../tools/shell/sandbox-backend.js";

/** What every part of the app is built with. */
export interface AppContext {
  readonly config: CoworkerConfig;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly readiness: Readiness;
  readonly shutdown: Shutdown;
  readonly store: Store;
  /** How this process coordinates with others on the store (in-process unless the store is Redis). */
  readonly coordination: Coordination;
  /**
   * The per-hour limits (wake-ups per subscription, wake_me_later per session, transcriptions per
   * person), counted in the store's 'budgets' space: built once, shared by every part and every
   * process on the store, and kept across restarts (store/slot-budget.ts).
   */
  readonly budget: SlotBudget;
  /**
   * Asked before each file people send is downloaded: their bytes of the day (in the store's
   * 'budgets' space, shared like `budget`) and the workspace's free disk space. Built once, so
   * every reconnect of a channel shares its free-space reading (attachments/upload-gate.ts).
   */
  readonly uploads: UploadGate;
  /** Names this process in leases, logs and the metrics' `process` label. */
  readonly processId: string;
  /**
   * run_command's sandbox, built once from tools.shell with the service's own paths hidden (data
   * folder, config file, .env, its code): the commands and the banner's shell line use this one.
   */
  readonly shell: SandboxBackend;
  /**
   * The service's own paths (its data folder, config file, .env, code: hiddenServicePaths), off
   * limits to the file tools as they are hidden from commands.
   */
  readonly serviceFiles: readonly string[];
}

/** The session layer as the app runs it (a SessionManager fits structurally). */
export interface AppConversation {
  readonly service: ConversationService;
  /**
   * Called once every channel has started (and registered its output): continue the work left
   * from before a restart, which may need to reach those channels' threads.
   */
  start?(): Promise<void>;
  /** Let running turns reach a safe point within `graceMs`, then interrupt and persist them. */
  drain?(graceMs: number): Promise<unknown>;
  close?(): Promise<void>;
}

/** Builds the session layer (sessions + engine + tools) on the app's store. */
export type ConversationServiceFactory = (context: AppContext) => Promise<AppConversation>;

/** A channel that is up and receiving. */
export interface RunningChannel {
  /** For the banner: "slack (socket mode)", "telegram (polling)", "console". */
  readonly description: string;
  /** Readiness: is the platform connection alive? */
  connected(): boolean | Promise<boolean>;
  /** Stop taking new messages (first step of shutdown). */
  stopIntake(): void | Promise<void>;
  /** Close connections (last step of shutdown). */
  close(): Promise<void>;
}

export interface ChannelContext extends AppContext {
  readonly service: ConversationService;
}

/** How a channel module joins the app: whether it is configured, and how to start it. */
export interface ChannelStarter {
  /** The platform name it registers its ThreadOutputFactory under. */
  readonly platform: string;
  /** Whether the config holds this channel's credentials. */
  hasCredentials(config: CoworkerConfig): boolean;
  /**
   * Connect once. When `signal` aborts (the attempt's deadline passed, or shutdown began) the
   * channel must stop whatever it started, so no abandoned attempt keeps retrying on its own.
   */
  start(context: ChannelContext, signal?: AbortSignal): Promise<RunningChannel>;
}

/** Everything `coworker start` runs besides ops, store and the console fallback. */
export interface AppAssembly {
  /** The session layer; startApp refuses to run channels without one. */
  readonly createConversation?: ConversationServiceFactory;
  /** Platform channels, started when their credentials are present. */
  readonly channels: readonly ChannelStarter[];
}

/** The process streams the app talks through (the console channel uses stdin / stdout). */
export interface AppIo {
  readonly stdin: Readable;
  readonly stdout: Writable;
  readonly stderr: Writable;
}
