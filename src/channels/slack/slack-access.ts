/**
 * Who may use the bot in Slack: allowed users and allowed channels from configuration (empty =
 * anyone in the workspace / any channel; DMs are governed by the user list only). Ids may be
 * written with or without a "slack:" prefix. With no user list, the workspace's guests (single-
 * and multi-channel) are not "anyone": an agent that runs commands and reads the workspace is not
 * for people the workspace itself keeps to a few channels, unless `allowGuests` says so or the user
 * list names them. When Slack cannot say whether a person is a guest (users.info failed), the
 * guest check fails closed: the person is refused, told Slack could not confirm their account, and
 * asked about again on their next message; the refusal is marked `unconfirmed`, so a wake-up check
 * can treat it as "cannot tell now" rather than as a "no". People of another organisation (Slack
 * Connect partners: AccountKind `external`) are not "anyone" either, whatever `allowGuests` says:
 * only the user list lets them in (slack.allow_external merely lets their deliveries reach the
 * app). The bots in `allowedBots` (bot ids B…, the author of a bot's post, or bot user ids) are let
 * in before the user list is read, which names people only; any other bot id is refused. People
 * named in the user list need no guest check, nor does an allowed bot: no bot is a guest, and
 * users.info knows no bot id. "Anyone who is no guest" means people: Slackbot (USLACKBOT, which
 * posts what others set up — reminders, workflow steps) and accounts users.info calls bots are
 * refused by it, so a turn always has a person (or an allowed bot) as its requester. A refused
 * person hears it once per channel per hour, privately, so a chatty thread does not turn into a
 * wall of refusals.
 */
import { LruCache } from "../../core/lru-cache.js";
import type { ConversationKind } from "./slack-conversation-kind.js";
import { SLACKBOT_USER_ID } from "./slack-events.js";

/**
 * Whether a person may use the bot here. A refusal is `unconfirmed` when Slack could not say
 * whether they are a guest (users.info failed): no "no" from Slack, only no answer yet. A message
 * is refused all the same (with REFUSALS.unconfirmed); a wake-up check can tell it from a
 * definite refusal and treat it as "cannot tell now" rather than "may no longer act".
 */
export type AccessDecision =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly refusal: string; readonly unconfirmed?: true };

export const REFUSALS = Object.freeze({
  user: "Sorry — I'm not set up to work with you yet. Please ask a Coworker admin to add you to the allowed users.",
  channel:
    "Sorry — I'm not enabled in this channel. Ask a Coworker admin to allow it, or message me directly instead.",
  guest:
    "Sorry — I don't work with guests of this workspace. Please ask a Coworker admin to add you to the allowed users.",
  external:
    "Sorry — I don't work with people from outside this workspace's organisation. Please ask a Coworker admin to add you to the allowed users.",
  unconfirmed:
    "Sorry — Slack couldn't confirm your account just now, so I can't work with you yet. Please try again shortly.",
});

/**
 * What kind of Slack account an id is: a member of the workspace, a guest of it, a person of
 * another organisation (Slack Connect), or a bot.
 */
export type AccountKind = "member" | "guest" | "external" | "bot";

/**
 * The kind of a person's Slack account, looked up (UserDirectory.account); undefined when Slack
 * could not say, which is refused like a guest.
 */
export type AccountLookup = (userId: string) => Promise<AccountKind | undefined>;

const REFUSAL_INTERVAL_MS = 60 * 60 * 1_000;

/**
 * A bot id (B…), as the author of a bot's post: no person, so no guest, and no account users.info
 * can look up. People (and bot users) have U… or W… ids.
 */
export function isBotId(id: string): boolean {
  return /^B[A-Z0-9]+$/.test(id);
}

function normalise(ids: readonly string[]): Set<string> {
  return new Set(ids.map((id) => id.trim().replace(/^slack:/, "")).filter((id) => id.length > 0));
}

export class AccessPolicy {
  private readonly users: Set<string>;
  private readonly channels: Set<string>;
  private readonly bots: Set<string>;
  private readonly refused = new LruCache<string, number>(10_000);

  /**
   * Guests are refused unless `guests.allow`; people of another organisation, and people Slack
   * cannot confirm are neither, are refused. `guests.account` is asked only when it matters (no
   * user list, no allowed bot). `allowedBots` are the bot ids and bot user ids whose posts the bot
   * handles (the only way Slackbot is let in without a user list).
   */
  constructor(
    allowedUsers: readonly string[],
    allowedChannels: readonly string[],
    private readonly guests: { readonly allow: boolean; readonly account: AccountLookup },
    allowedBots: readonly string[] = [],
  ) {
    this.users = normalise(allowedUsers);
    this.channels = normalise(allowedChannels);
    this.bots = normalise(allowedBots);
  }

  /** Whether this person may use the bot at all, wherever they are (`check` adds the channel). */
  private async checkUser(userId: string): Promise<AccessDecision> {
    if (this.bots.has(userId)) return { allowed: true };
    if (isBotId(userId)) return { allowed: false, refusal: REFUSALS.user };
    if (this.users.size > 0)
      return this.users.has(userId) ? { allowed: true } : { allowed: false, refusal: REFUSALS.user };
    if (userId === SLACKBOT_USER_ID) return { allowed: false, refusal: REFUSALS.user };
    const account = await this.guests.account(userId);
    if (account === undefined) return { allowed: false, refusal: REFUSALS.unconfirmed, unconfirmed: true };
    if (account === "bot") return { allowed: false, refusal: REFUSALS.user };
    if (account === "external") return { allowed: false, refusal: REFUSALS.external };
    return account === "guest" && !this.guests.allow
      ? { allowed: false, refusal: REFUSALS.guest }
      : { allowed: true };
  }

  /** Whether this person may talk to the bot (or press its buttons) in this conversation. */
  async check(userId: string, channel: string, kind: ConversationKind): Promise<AccessDecision> {
    const user = await this.checkUser(userId);
    if (!user.allowed) return user;
    if (kind === "channel" && this.channels.size > 0 && !this.channels.has(channel)) {
      return { allowed: false, refusal: REFUSALS.channel };
    }
    return { allowed: true };
  }

  /** True the first time in an hour a person is refused in a channel: then say so. */
  shouldTell(userId: string, channel: string, now = Date.now()): boolean {
    const key = `${channel}:${userId}`;
    const last = this.refused.get(key);
    if (last !== undefined && now - last < REFUSAL_INTERVAL_MS) return false;
    this.refused.set(key, now);
    return true;
  }
}
