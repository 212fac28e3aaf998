/**
 * Who is a member of an allowed group, for the people `allowed_chats` alone lets in: a listed
 * group admits its members, not everyone who can write there — in a channel's linked discussion
 * group anyone who comments on the channel's posts can, without joining. The answer is the one
 * wake-ups rely on (TelegramDirectory.isMember: getChatMember says creator, administrator, member,
 * or restricted but still a member), kept a few minutes per chat and person so a busy group costs
 * one lookup per person every few minutes; the cache is bounded (the oldest answer goes first);
 * concurrent lookups of one person share one call. A lookup Telegram cannot answer counts as not a
 * member, never thrown: logged with Telegram's reason and kept as "refused for now" for 30 s (or
 * as long as Telegram's retry after says), so a failing getChatMember is not asked again for each
 * message. While Telegram has asked to wait (429), nobody new is looked up until the wait is over:
 * they are refused as unconfirmed, logged once per wait.
 */
import { GrammyError } from "grammy";
import type { Logger } from "pino";
import { errorText } from "./telegram-errors.js";

/** How long an answer is kept. */
const KEEP_MS = 5 * 60 * 1000;
/** How long a failed lookup is kept as "refused for now" when Telegram did not say how long to wait. */
const FAILED_KEEP_MS = 30 * 1000;
/** The most answers kept. */
const MAX_ENTRIES = 10_000;

export interface MembershipOptions {
  /**
   * Whether the person is in the chat now; throws when Telegram cannot say — on a 429 at once, not
   * after waiting it out (the lookup holds its chat's updates).
   */
  readonly lookup: (chatId: number, userId: number) => Promise<boolean>;
  readonly logger: Logger;
}

interface Entry {
  readonly until: number;
  readonly member: Promise<boolean>;
}

/**
 * How long Telegram asked to wait, in ms, when the failure is its 429: the retry_after of its
 * error, thrown as is or kept as the cause (the directory rethrows it with a readable message);
 * undefined for any other failure.
 */
function retryAfterMs(error: unknown): number | undefined {
  const telegram = error instanceof GrammyError ? error : error instanceof Error ? error.cause : undefined;
  if (!(telegram instanceof GrammyError)) return undefined;
  const seconds = telegram.parameters.retry_after;
  return seconds === undefined ? undefined : seconds * 1000;
}

/** Group membership, looked up and kept a few minutes (see module comment). */
export class GroupMembership {
  private readonly entries = new Map<string, Entry>();
  /** Until when Telegram asked not to be called (its last 429's retry after). */
  private waitUntil = 0;
  /** The wait whose refusals were logged already. */
  private waitLogged = 0;

  constructor(private readonly options: MembershipOptions) {}

  /** Whether the person is a member of the chat (false when Telegram cannot say now). */
  isMember(chatId: number, userId: number): Promise<boolean> {
    const key = `${chatId}:${userId}`;
    const now = Date.now();
    const kept = this.entries.get(key);
    if (kept !== undefined && kept.until > now) return kept.member;
    this.entries.delete(key);
    if (now < this.waitUntil) {
      if (this.waitLogged !== this.waitUntil) {
        this.waitLogged = this.waitUntil;
        this.options.logger.warn(
          { chatId, userId, until: new Date(this.waitUntil).toISOString() },
          "telegram: Telegram asked to wait; membership of allowed groups is not checked until then, and those not yet checked are refused",
        );
      }
      return Promise.resolve(false);
    }
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    const member: Promise<boolean> = this.options.lookup(chatId, userId).catch((error: unknown) => {
      const wait = retryAfterMs(error);
      const failedAt = Date.now();
      if (wait !== undefined) this.waitUntil = Math.max(this.waitUntil, failedAt + wait);
      if (this.entries.get(key)?.member === member)
        this.entries.set(key, { until: failedAt + Math.max(wait ?? 0, FAILED_KEEP_MS), member });
      this.options.logger.warn(
        { chatId, userId, err: errorText(error) },
        "telegram: could not check membership of an allowed group; refused",
      );
      return false;
    });
    this.entries.set(key, { until: now + KEEP_MS, member });
    return member;
  }
}
