/**
 * Where a conversation happens and who speaks in it: the platform-neutral address every layer
 * uses for a thread, DM or forum topic, and the session key derived from it. Plain data, stored
 * with the session; the schemas here are the one check of a target wherever it is read back
 * (`storedTargetSchema`) or crosses a boundary (`threadTargetSchema`).
 */
import { z } from "zod";

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

/** A target's platform details: names with text, number or flag values (ThreadTarget.extra). */
export const targetExtraSchema = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]));

/** A target as a channel hands it over or a tool reads it: every id present. */
export const threadTargetSchema = z.object({
  platform: z.string().min(1),
  workspace: z.string().min(1),
  channel: z.string().min(1),
  thread: z.string().min(1).optional(),
  extra: targetExtraSchema.optional(),
});

/** A target as the stores keep it (sessions, pending items, reviewer denials), read back. */
export const storedTargetSchema = z.object({
  platform: z.string().min(1),
  workspace: z.string(),
  channel: z.string(),
  thread: z.string().optional(),
  extra: targetExtraSchema.optional(),
});

/**
 * Whether the thread is shared by several people rather than one person's DM: a Slack channel
 * (ids not starting with "D"), a Telegram group, supergroup or topic (negative chat ids) — the
 * kind the channel recorded in `extra` first (Slack `kind`, Telegram `chatType`), as the channels'
 * own checks read it. Other platforms (the console) are one person's.
 */
export function isSharedThread(target: Pick<ThreadTarget, "platform" | "channel" | "extra">): boolean {
  const { kind, chatType } = target.extra ?? {};
  if (target.platform === "slack")
    return kind === undefined ? !target.channel.startsWith("D") : kind !== "dm";
  if (target.platform === "telegram")
    return chatType === undefined ? target.channel.startsWith("-") : chatType !== "private";
  return false;
}

/**
 * The thread or chat itself, as a reply to no message: `target` without `extra.replyTo` (the
 * message a channel threads replies and cards to: Telegram's), its other details kept.
 */
export function replyingToNone(target: ThreadTarget): ThreadTarget {
  if (target.extra?.replyTo === undefined) return target;
  const { replyTo: _, ...extra } = target.extra;
  const { extra: __, ...rest } = target;
  return Object.keys(extra).length > 0 ? { ...rest, extra } : rest;
}

/**
 * The thread as a reply to one message: `target` with `extra` the message's own details (its
 * `replyTo`, as the channel recorded them with it), or as a reply to none when it has none (a
 * wake-up, a scheduled run) — never to the session's first message, in a group maybe another
 * member's.
 */
export function replyingTo(target: ThreadTarget, extra: ThreadTarget["extra"] | undefined): ThreadTarget {
  return extra ? { ...target, extra } : replyingToNone(target);
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

/**
 * The conversation a tool call comes from and the person it acts for: the calling session, its
 * thread, and the person whose request the turn serves. The messaging tools (send_message) and
 * the subscription tools (subscribe_channel, catch_up) both take one because both reach a channel
 * other than this conversation, and may do so only where that person could themselves — post
 * there, or read it — never on the bot's own standing; the schedule tools take it too, for whose
 * task it is and where it runs.
 */
export interface Caller {
  readonly sessionId: string;
  readonly target: ThreadTarget;
  readonly requester: PlatformUser;
}
