/**
 * Who is a member of an allowed group, for the people `allowed_chats` alone lets in: a listed
 * group admits its members, not everyone who can write there — in a channel's linked discussion
 * group anyone who comments on the channel's posts can, without joining. The answer is the one
 * wake-ups rely on (TelegramDirectory.isMember: getChatMember says creator, administrator, member,
 * or restricted but still a member), kept a few minutes per chat and person so a busy group costs
 * one lookup per person every few minutes; the cache is bounded (the oldest answer goes first). A
 * lookup Telegram cannot answer counts as not a member: logged with Telegram's reason, never kept,
 * never thrown.
 */
import type { Logger } from "pino";
import { errorText } from "./telegram-errors.js";

/** How long an answer is kept. */
const KEEP_MS = 5 * 60 * 1000;
/** The most answers kept. */
const MAX_ENTRIES = 10_000;

export interface MembershipOptions {
  /** Whether the person is in the chat now; throws when Telegram cannot say. */
  readonly lookup: (chatId: number, userId: number) => Promise<boolean>;
  readonly logger: Logger;
}

interface Entry {
  readonly until: number;
  readonly member: Promise<boolean>;
}

/** Group membership, looked up and kept a few minutes (see module comment). */
export class GroupMembership {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly options: MembershipOptions) {}

  /** Whether the person is a member of the chat (false when Telegram cannot say). */
  isMember(chatId: number, userId: number): Promise<boolean> {
    const key = `${chatId}:${userId}`;
    const now = Date.now();
    const kept = this.entries.get(key);
    if (kept !== undefined && kept.until > now) return kept.member;
    this.entries.delete(key);
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    const member: Promise<boolean> = this.options.lookup(chatId, userId).catch((error: unknown) => {
      if (this.entries.get(key)?.member === member) this.entries.delete(key);
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
