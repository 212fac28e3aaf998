/**
 * PlatformDirectory: what the subscription code needs to know from a chat platform — find a
 * channel by id or name, whether a person is a member of it, whether the bot can read it (and
 * what a person must do when it cannot), the id a stored channel id stands for now, and the
 * channel's history for a rare backfill. One directory per platform workspace; each channel
 * adapter offers its own (…-directory.ts in its folder).
 */
import { clipLine } from "../core/one-line.js";
import type { BufferEntryInput } from "./buffer-entry.js";

/** Who the bot is on the platform: its user id, and the @names people mention it by. */
export interface BotIdentity {
  readonly userId: string;
  readonly names: readonly string[];
}

export type ResolveResult =
  | {
      readonly ok: true;
      /** Platform channel id (Slack "C0123", Telegram "-100123"). */
      readonly channel: string;
      /** For people: "#deploys", "Ops team". */
      readonly name: string;
      /** A Telegram forum topic named in the reference ("-100123:5"). */
      readonly thread?: string;
      /**
       * Only its admins post there (a Telegram broadcast channel): being a member is not enough.
       * Required, so a directory that forgets to say is a type error rather than "members may post".
       */
      readonly broadcast: boolean;
    }
  | { readonly ok: false; readonly error: string };

/** A channel the directory found. */
export type ResolvedChannel = Extract<ResolveResult, { ok: true }>;

export type ReadAccess = { readonly ok: true } | { readonly ok: false; readonly whatToDo: string };

/** A history backfill: entries oldest first, and a note when the platform could not give everything. */
export interface HistoryPage {
  readonly entries: readonly BufferEntryInput[];
  readonly note?: string;
}

export interface HistoryOptions {
  /** ISO time: only messages sent at or after it. */
  readonly since?: string;
  readonly limit: number;
  /** Only this topic / thread. */
  readonly thread?: string;
}

export interface PlatformDirectory {
  /** "slack" | "telegram": matches ThreadTarget.platform. */
  readonly platform: string;
  /** Slack team id / Telegram "tg": matches ThreadTarget.workspace. */
  readonly workspace: string;
  readonly bot: BotIdentity;
  /** Slack: id, <#id|name>, #name or name. Telegram: chat id or @username, a topic as chat:topic. */
  resolveChannel(ref: string): Promise<ResolveResult>;
  /**
   * The id a stored channel id stands for now, the one its messages are reported under — only as
   * the platform itself tells the bot (Telegram: a group upgraded to a supergroup; Slack: the id
   * itself). Throws when the platform cannot say.
   */
  canonicalChannel(channel: string): Promise<string>;
  /** Whether the person is a member of the channel. Throws when the platform cannot say. */
  isMember(channel: string, userId: string): Promise<boolean>;
  /** Make sure the bot sees every message there (Slack joins public channels) or say what to do. */
  ensureBotCanRead(channel: string): Promise<ReadAccess>;
  /** Recent messages for a cold buffer (rare: platforms rate-limit history heavily). */
  history(channel: string, options: HistoryOptions): Promise<HistoryPage>;
}

/** Longest channel display name kept. */
export const MAX_DISPLAY_NAME_CHARS = 80;

/**
 * A channel or person name as shown to people and the model: one line, at most 80 characters (or
 * `max`, leaving room for what follows it). (Telegram titles are free text chosen by anyone who
 * can edit the group.)
 */
export function displayName(text: string, max = MAX_DISPLAY_NAME_CHARS): string {
  return clipLine(text, max);
}

/** The message of a thrown platform failure, for refusals that say why. */
export function failureText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
