/**
 * ChannelAdapter: the one interface a chat platform implements to join Coworker. It bundles the
 * ports the rest of the service reaches a platform through — the inbound lifecycle (start, stop,
 * health), the thread output the session layer streams turns into, the Messenger the messaging
 * tools post and upload files with, and the directory channel subscriptions look channels,
 * members and history up in — so the app wires every platform the same way (src/app/
 * channel-starter.ts) and a new platform is one folder that implements this file. Files people
 * send are downloaded by the adapter's intake into the workspace (`InboundFileOptions`); files
 * the agent sends go out through `messenger.sendFile`.
 */
import type { AttachmentIntake } from "../attachments/inbound-attachments.js";
import type { UploadGate } from "../attachments/upload-gate.js";
import type { ThreadOutput } from "../core/thread-output.js";
import type { ThreadTarget } from "../core/thread-target.js";
import type { ObservedChange } from "../subscriptions/observed-change.js";
import type { ObservedMessage } from "../subscriptions/observed-message.js";
import type { PlatformDirectory } from "../subscriptions/platform-directory.js";
import type { Messenger } from "../tools/messaging/messenger.js";

/** How the inbound side is doing, for readiness: `ready` gates /readyz, `state` explains it. */
export interface ChannelHealth {
  /** Connected (Socket Mode, polling answered) or listening (HTTP endpoints, webhook). */
  readonly ready: boolean;
  /** The transport's own word for it: "connected", "reconnecting", "listening", "stopped", … */
  readonly state: string;
}

/** A conversation place the bot was removed from, as subscriptions and schedules key it. */
export type RemovedChannel = Pick<ThreadTarget, "platform" | "workspace" | "channel">;

/** What an adapter reports about the conversations it sees, for channel subscriptions. */
export interface ChannelHooks {
  /** Told about every message seen in a channel or group (SubscriptionService.observe). */
  readonly observe?: (message: ObservedMessage) => Promise<unknown> | undefined;
  /** Told when a message in a channel or group is edited or deleted (SubscriptionService.observeChange). */
  readonly observeChange?: (change: ObservedChange) => Promise<unknown> | undefined;
  /** Told when the bot left or was removed from a channel (subscriptions there end). */
  readonly onBotRemoved?: (channel: RemovedChannel) => void;
}

/** Where and how big the files people send may be, and what they become for the model. */
export interface InboundFileOptions {
  /** Largest file accepted from people. */
  readonly fileMaxBytes: number;
  /** Absolute workspace path; files are saved under `<workspaceRoot>/uploads/<session>/`. */
  readonly workspaceRoot: string;
  /** Coworker's own files (data folder, config file): never written or read for a person's file. */
  readonly serviceFiles?: readonly string[];
  /** What saved files become for the model; default caps and no transcription when absent. */
  readonly attachments?: AttachmentIntake;
  /**
   * Asked before each file is downloaded: the sender's bytes of the day and the free disk space
   * (attachments/upload-gate.ts). Required, so no channel is ever built with unlimited uploads.
   */
  readonly uploads: UploadGate;
}

/** One chat platform as the app runs it (see the module comment). */
export interface ChannelAdapter {
  /** ThreadTarget.platform of the adapter's threads: "slack", "telegram", "console". */
  readonly platform: string;
  /** For the banner and logs: "slack (socket mode)", "telegram (polling)". */
  readonly description: string;
  /**
   * Connect and begin receiving; rejects with a classified failure when it cannot, having undone
   * what it began (so the next attempt starts afresh).
   */
  start(): Promise<void>;
  /** Stop receiving and wait for in-flight handlers; turns keep running in the session layer. */
  stop(): Promise<void>;
  health(): ChannelHealth;
  /** The thread output for `target` (the session layer's ThreadOutputFactory). */
  outputFor(target: ThreadTarget): ThreadOutput;
  /** send_message / send_file for sessions on this platform; absent where tools cannot post. */
  readonly messenger?: Messenger;
  /** The subscriptions' directory of this workspace; throws before `start` has identified the bot. */
  directory?(): PlatformDirectory;
  /** A person's IANA timezone, where the platform knows it (for scheduled tasks). */
  timezoneOf?(userId: string): Promise<string | undefined>;
  /**
   * Whether the person may use the bot in `target`'s conversation under this platform's access
   * rules now (allowed users and chats, guests, deactivated accounts) and, in a conversation
   * several people share, is still a member of it: a scheduled task or a subscription of theirs
   * wakes a turn only then. Rejects when the platform cannot tell; asked only after `start`.
   */
  mayAct?(userId: string, target: ThreadTarget): Promise<boolean>;
}
