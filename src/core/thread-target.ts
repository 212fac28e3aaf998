/**
 * Where a conversation happens and who speaks in it: the platform-neutral address every layer
 * uses for a thread, DM or forum topic, and the session key derived from it. Plain data, stored
 * with the session.
 */

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
