/**
 * The contract between channel adapters and the session layer. Channels normalise platform
 * payloads into these shapes and implement `ThreadOutput`; the session layer never imports a
 * channel. All of these are plain serialisable data except the output interfaces.
 */
import type { Card, CardRef } from "../approvals/card.js";
import type { AgentEvent } from "../engine/events.js";
import type { Attachment } from "../media/attachment.js";

/** One conversation place on a platform. Serialisable: it is stored with the session. */
export interface ThreadTarget {
  readonly platform: string;
  /** Slack team id / Telegram "tg" / console "local". */
  readonly workspace: string;
  readonly channel: string;
  /** Slack thread_ts, Telegram forum topic id, or undefined for one session per chat. */
  readonly thread?: string;
  /** Platform details the renderer needs (e.g. reply-to message id, chat type). */
  readonly extra?: Readonly<Record<string, string | number | boolean>>;
}

/** The session key for a target: platform + workspace + channel + thread. */
export function sessionKeyOf(target: ThreadTarget): string {
  return [target.platform, target.workspace, target.channel, target.thread ?? "-"].join(":");
}

export interface PlatformUser {
  /** Platform user id ("U0123", "4567"). */
  readonly id: string;
  readonly name: string;
}

export interface InboundFile {
  /** Workspace-relative path where the channel saved the file. */
  readonly path: string;
  readonly name: string;
  readonly bytes: number;
  /** What the platform says the file is (MIME type), when it says. */
  readonly mediaType?: string;
  /** Length of a voice note or audio clip, in seconds, when known. */
  readonly durationS?: number;
}

export interface InboundMessage {
  /** Every id this delivery is known by (event id, channel+ts, update id): all are deduped. */
  readonly dedupeKeys: readonly string[];
  readonly target: ThreadTarget;
  readonly user: PlatformUser;
  readonly text: string;
  readonly files: readonly InboundFile[];
  /** Images among the files, as records the engine adapts to each model call. */
  readonly attachments?: readonly Attachment[];
  /** ISO time the platform says it was sent. */
  readonly sentAt: string;
}

export type ButtonPress =
  | {
      readonly kind: "card";
      readonly platform: string;
      readonly pendingId: string;
      readonly action: string;
      readonly user: PlatformUser;
    }
  | {
      readonly kind: "control";
      readonly control: "stop" | "retry";
      readonly target: ThreadTarget;
      readonly user: PlatformUser;
    };

/** What a press led to; channels show refusals privately (ephemeral / alert). */
export type PressResult =
  | { readonly status: "accepted"; readonly message: string }
  | {
      readonly status: "not_allowed" | "already_decided" | "expired" | "unknown" | "invalid";
      readonly message: string;
    };

/** Renders one running turn's events into the thread. */
export interface TurnRenderer {
  handle(event: AgentEvent): Promise<void>;
  /** The turn is over (after `turn-completed`, or abandoned): flush everything. */
  close(): Promise<void>;
}

/** What a channel is told when a turn begins. */
export interface TurnInfo {
  readonly sessionId: string;
  readonly turnId: string;
  /**
   * The `target.extra` of the message that triggered this turn (e.g. the message id to reply to);
   * the session's target keeps the extra of its first message. Absent for retries and for turns
   * whose trigger is unknown (queued or started by an older version): use the session's target.
   */
  readonly replyTo?: Readonly<Record<string, string | number | boolean>>;
}

/** A channel's handle on one thread: streams turns and posts / updates cards there. */
export interface ThreadOutput {
  beginTurn(info: TurnInfo): TurnRenderer;
  postCard(card: Card): Promise<CardRef>;
  updateCard(ref: CardRef, card: Card): Promise<void>;
  /** A short standalone message (command replies, refusals, subscription notices). */
  postText(text: string): Promise<void>;
  /**
   * Optional, for channels whose cards do not outlive the process (the console): show a card
   * that is still pending from before a restart again; resolves with its new ref.
   */
  reshowCard?(card: Card): Promise<CardRef>;
}

/** Each channel registers one: the session layer can reach any thread, also after a restart. */
export type ThreadOutputFactory = (target: ThreadTarget) => ThreadOutput;

/** What became of an inbound message. */
export type ReceiveResult =
  | { readonly status: "started" | "queued" | "answered" | "command" | "duplicate" }
  | { readonly status: "ignored"; readonly reason: string };

/**
 * The session layer as channels see it. `receive` records the message (dedupe, persist) and
 * schedules the turn; it resolves once recorded, never when the turn ends, so platform handlers
 * can ack at once.
 */
export interface ConversationService {
  registerOutput(platform: string, factory: ThreadOutputFactory): void;
  receive(message: InboundMessage): Promise<ReceiveResult>;
  press(press: ButtonPress): Promise<PressResult>;
  /**
   * A control command (slash command or its text form): stop, new, mode <m>, model <name>,
   * status, grants [revoke], approve <id>, deny <id>. Resolves with the reply text to show.
   */
  command(target: ThreadTarget, user: PlatformUser, name: string, args: readonly string[]): Promise<string>;
  /**
   * Optional: whether a session exists for this target. Channels ask it when a thread reply
   * without a mention arrives in a thread they have no local record of (e.g. after a restart),
   * to decide whether the reply continues a conversation.
   */
  hasSession?(target: ThreadTarget): Promise<boolean>;
}
