/**
 * Who may use the bot. Allowed users (TELEGRAM_ALLOWED_USERS) may use it in private chats and in
 * any group; allowed chats let every member of a listed group use it; everyone else is refused
 * with one short reply (per user, per hour) that gives their user id and how to get access —
 * an admin adds the id to the configuration, or approves the pairing code in the reply with
 * `/pair <code>`. Paired users are kept in the optional store, else for the process lifetime.
 * Anonymous group admins (who write as the group) are never allowed; a chat is told so at most
 * once an hour.
 */
import { randomInt } from "node:crypto";
import type { KeyValueSpace } from "../../store/store.js";

export interface AccessOptions {
  readonly allowedUsers: readonly string[];
  readonly allowedChats: readonly string[];
  /** Persists approved pairings; without it they last until restart. */
  readonly store?: KeyValueSpace;
  readonly now?: () => number;
}

export interface AccessChat {
  readonly id: number;
  readonly type: string;
  /** The chat's other id after a group's upgrade to a supergroup: listing either one allows it. */
  readonly alsoKnownAs?: number;
}

export interface AccessUser {
  readonly id: number;
  readonly name: string;
}

interface Pairing {
  readonly code: string;
  readonly user: AccessUser;
  readonly expiresAt: number;
}

const CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";
const CODE_TTL_MS = 60 * 60 * 1000;
const REFUSAL_EVERY_MS = 60 * 60 * 1000;
const MEMORY_CAP = 10_000;

function pairedKey(userId: number): string {
  return `tg:paired:${userId}`;
}

/** Decides access and manages pairing codes (see module comment). */
export class TelegramAccess {
  private readonly admins: ReadonlySet<string>;
  private readonly chats: ReadonlySet<string>;
  private readonly paired = new Set<string>();
  private readonly codes = new Map<string, Pairing>();
  private readonly refusedAt = new Map<string, number>();
  private readonly now: () => number;

  constructor(private readonly options: AccessOptions) {
    this.admins = new Set(options.allowedUsers.map(String));
    this.chats = new Set(options.allowedChats.map(String));
    this.now = options.now ?? Date.now;
  }

  /** Configured allowed users: they may also approve pairing codes. */
  isAdmin(userId: number): boolean {
    return this.admins.has(String(userId));
  }

  /** May this user use the bot in this chat? */
  async allows(chat: AccessChat, user: AccessUser): Promise<boolean> {
    if (this.isAdmin(user.id)) return true;
    if (chat.type !== "private" && this.chats.has(String(chat.id))) return true;
    if (chat.type !== "private" && chat.alsoKnownAs !== undefined && this.chats.has(String(chat.alsoKnownAs)))
      return true;
    return this.isPaired(user.id);
  }

  private async isPaired(userId: number): Promise<boolean> {
    if (this.paired.has(String(userId))) return true;
    const stored = await this.options.store?.get<{ by: string }>(pairedKey(userId));
    if (stored) this.paired.add(String(userId));
    return stored !== undefined;
  }

  /**
   * The short refusal for a user who is not allowed, or undefined when they were told within the
   * last hour (one reply, not one per message).
   */
  refusal(chat: AccessChat, user: AccessUser): string | undefined {
    const now = this.now();
    if (!this.firstThisHour(`${chat.id}:${user.id}`, now)) return undefined;
    const code = this.codeFor(user, now);
    const chatHint =
      chat.type === "private"
        ? ""
        : `, or allow this whole group by adding chat id ${chat.id} to allowed_chats`;
    return (
      `Sorry, you are not allowed to use this bot. Your Telegram user id is ${user.id}. ` +
      `An admin can add it to TELEGRAM_ALLOWED_USERS${chatHint}, or approve you by sending /pair ${code} to the bot.`
    );
  }

  /**
   * The note for an anonymous group admin who addressed the bot, or undefined when this chat was
   * told within the last hour. Nobody can be authorised or held to account as that sender.
   */
  anonymousNote(chat: AccessChat): string | undefined {
    if (!this.firstThisHour(`${chat.id}:anonymous`, this.now())) return undefined;
    return (
      "Sorry, I can't work for anonymous group admins: I can't tell who is asking. " +
      'Turn off "Remain anonymous" in your admin rights to talk to me.'
    );
  }
  /** Whether nobody was told under `key` within the last hour; if so, it counts as told now. */
  private firstThisHour(key: string, now: number): boolean {
    const last = this.refusedAt.get(key);
    if (last !== undefined && now - last < REFUSAL_EVERY_MS) return false;
    if (this.refusedAt.size >= MEMORY_CAP) this.refusedAt.clear();
    this.refusedAt.set(key, now);
    return true;
  }

  private codeFor(user: AccessUser, now: number): string {
    for (const [code, pairing] of this.codes) {
      if (pairing.expiresAt <= now) this.codes.delete(code);
      else if (pairing.user.id === user.id) return code;
    }
    const code = Array.from({ length: 6 }, () => CODE_ALPHABET[randomInt(CODE_ALPHABET.length)]).join("");
    if (this.codes.size < MEMORY_CAP) this.codes.set(code, { code, user, expiresAt: now + CODE_TTL_MS });
    return code;
  }

  /** An admin approves a pairing code; returns the reply to show the admin. */
  async approve(admin: AccessUser, rawCode: string | undefined): Promise<string> {
    if (!this.isAdmin(admin.id))
      return "Only an admin (a user in TELEGRAM_ALLOWED_USERS) can approve pairing codes.";
    const code = (rawCode ?? "").trim().toUpperCase();
    const pairing = this.codes.get(code);
    if (!pairing || pairing.expiresAt <= this.now())
      return `No pending pairing code "${code}" (codes expire after an hour).`;
    this.codes.delete(code);
    this.paired.add(String(pairing.user.id));
    await this.options.store?.set(pairedKey(pairing.user.id), {
      by: String(admin.id),
      at: new Date(this.now()).toISOString(),
    });
    return `Approved: ${pairing.user.name} (user id ${pairing.user.id}) may now use the bot.`;
  }
}
