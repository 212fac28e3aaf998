/**
 * Who may use the bot. Allowed users (TELEGRAM_ALLOWED_USERS) may use it in private chats and in
 * any group; allowed chats let every member of a listed group use it — only members, as
 * getChatMember says (telegram-membership.ts), not everyone who can write there (a commenter on a
 * linked channel's posts need not join its discussion group); everyone else is refused with one
 * short reply (per user and chat, per hour) that gives their user id and how to get access — an
 * admin adds the id to the configuration, or approves the pairing code in the reply with
 * `/pair <code>`. Anonymous group admins (who write as the group) are never allowed; a chat is
 * told so at most once an hour. Those replies are counted in the store's slot budget, shared by
 * every process on it (several processes answer one reply an hour between them, not one each);
 * when the count cannot be taken nobody is told (logged): a stranger is never answered per message.
 *
 * Pairing codes are kept in the store (`tg:paircode:<code>`, the person and the expiry, for an
 * hour), taken with write-if-absent and removed when approved, so any process approves a code
 * another one showed (webhooks behind a load balancer), also after a restart; a code that could not
 * be stored is never shown (the refusal then offers the other ways in).
 *
 * A pairing gives the paired account an allowed user's standing, so it lasts only as long as the
 * standing of whoever granted it: each records its approver (and when), and counts only while
 * that approver is still an allowed user — removing an admin from the allowed users ends every
 * pairing they approved, at once. A record naming no approver never counts (logged once per
 * account). Allowed users list the pairings with `/pairs` and end one with `/unpair <user id>`.
 * Pairings are kept in the store (read afresh at each check, so an `/unpair` in another process
 * counts at once). The store has no key listing, so `/pairs` reads the paired ids from their own
 * index (telegram-pairing-index.ts), which concurrent approvals cannot make lose one. A record the
 * index does not have (written before it existed, or by an approval that stopped before its index
 * entry) joins it the first time this process checks that account, whether or not it counts.
 * A stored record of the wrong shape is no pairing.
 */
import { randomInt } from "node:crypto";
import type { Logger } from "pino";
import { z } from "zod";
import type { SlotBudget } from "../../store/slot-budget.js";
import { getAll, type KeyValueSpace } from "../../store/store.js";
import { errorText } from "./telegram-errors.js";
import type { GroupMembership } from "./telegram-membership.js";
import { PairingIndex } from "./telegram-pairing-index.js";

export interface AccessOptions {
  readonly allowedUsers: readonly string[];
  readonly allowedChats: readonly string[];
  /** Persists approved pairings (and their index, for `/pairs`). */
  readonly store: KeyValueSpace;
  /** Where the once-an-hour replies to those refused are counted: an hourly budget on the store. */
  readonly replies: SlotBudget;
  /** Membership of the allowed groups, for those who are in only through one. */
  readonly members: Pick<GroupMembership, "isMember">;
  readonly now?: () => number;
  /** Told when a stored pairing no longer counts (no approver, or one no longer allowed). */
  readonly logger?: Logger;
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

/**
 * How a person may use the bot in a chat: as an allowed or paired user, only as a member of an
 * allowed group (to be checked), or not at all.
 */
export type Standing = "user" | "if-member" | undefined;

/** A pending pairing code: who it pairs, and until when (ms since the epoch). */
const PairCodeSchema = z.object({
  userId: z.number().int(),
  name: z.string(),
  expiresAt: z.number(),
});
type PairCode = z.infer<typeof PairCodeSchema>;

/** A stored pairing: who was paired, who approved it and when. */
const PairingRecordSchema = z.object({
  /** The approver's user id; a record without one never counts. */
  by: z.string().optional(),
  byName: z.string().optional(),
  /** ISO time of the approval. */
  at: z.string().optional(),
  /** The paired person's name when approved; absent on records written before `/pairs`. */
  name: z.string().optional(),
});
type PairingRecord = Readonly<z.infer<typeof PairingRecordSchema>>;

/** A stored pairing record, or undefined when the value is not one (a malformed record is no pairing). */
function parsePairing(value: unknown): PairingRecord | undefined {
  const parsed = PairingRecordSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

const CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";
const CODE_LENGTH = 6;
const CODE_SHAPE = new RegExp(`^[${CODE_ALPHABET}]{${CODE_LENGTH}}$`);
const CODE_TTL_MS = 60 * 60 * 1000;
/** Fresh codes tried when one is taken already (one in hundreds of millions). */
const CODE_ATTEMPTS = 3;
/** The most accounts whose lapsed pairing is remembered as logged. */
const MEMORY_CAP = 10_000;

function pairedKey(userId: number | string): string {
  return `tg:paired:${userId}`;
}

function codeKey(code: string): string {
  return `tg:paircode:${code}`;
}

/** What `allows` answers an allowed user, at once. */
const ALLOWED: Promise<boolean> = Promise.resolve(true);

const ADMIN_ONLY = "Only an admin (a user in TELEGRAM_ALLOWED_USERS) can";

/** Decides access and manages pairing codes (see module comment). */
export class TelegramAccess {
  private readonly admins: ReadonlySet<string>;
  private readonly chats: ReadonlySet<string>;
  /** Accounts whose pairing that does not count was logged (once each). */
  private readonly loggedLapsed = new Set<string>();
  /** The ids of the accounts ever paired, for `/pairs`. */
  private readonly index: PairingIndex;
  private readonly now: () => number;

  constructor(private readonly options: AccessOptions) {
    this.admins = new Set(options.allowedUsers.map(String));
    this.chats = new Set(options.allowedChats.map(String));
    this.now = options.now ?? Date.now;
    this.index = new PairingIndex(options.store);
  }

  /** Configured allowed users: they may also approve pairing codes. */
  isAdmin(userId: number): boolean {
    return this.admins.has(String(userId));
  }

  /** May this user use the bot in this chat? In through an allowed group alone, only as its member. */
  allows(chat: AccessChat, user: AccessUser): Promise<boolean> {
    // An allowed user may anywhere, with nothing to look up (most messages: no await for them).
    return this.isAdmin(user.id) ? ALLOWED : this.allowsOnceLookedUp(chat, user);
  }

  private async allowsOnceLookedUp(chat: AccessChat, user: AccessUser): Promise<boolean> {
    const standing = await this.standing(chat, user);
    if (standing !== "if-member") return standing === "user";
    return this.options.members.isMember(chat.id, user.id);
  }

  /** The person's standing in the chat, membership not checked (see Standing). */
  async standing(chat: AccessChat, user: AccessUser): Promise<Standing> {
    if (this.isAdmin(user.id) || (await this.isPaired(user.id))) return "user";
    return this.listsChat(chat) ? "if-member" : undefined;
  }

  /** Whether the group (or the group it was before its upgrade) is in allowed_chats. */
  private listsChat(chat: AccessChat): boolean {
    if (chat.type === "private") return false;
    return (
      this.chats.has(String(chat.id)) ||
      (chat.alsoKnownAs !== undefined && this.chats.has(String(chat.alsoKnownAs)))
    );
  }

  /** Whether the user has a pairing that counts: one whose approver is still an allowed user. */
  private async isPaired(userId: number): Promise<boolean> {
    const id = String(userId);
    const record = await this.recordOf(id);
    if (record === undefined) return false;
    // Listed from now on (a record from before the index, or one whose approval stopped before
    // its index entry), so that /pairs shows it, even when it does not count.
    await this.index.add(id);
    const lapsed = lapseOf(record, this.admins);
    if (lapsed !== undefined) {
      if (!this.loggedLapsed.has(id)) {
        if (this.loggedLapsed.size >= MEMORY_CAP) this.loggedLapsed.clear();
        this.loggedLapsed.add(id);
        this.options.logger?.warn(
          { userId, approvedBy: record.by ?? null },
          `telegram: a pairing no longer counts: ${lapsed}`,
        );
      }
      return false;
    }
    return true;
  }

  private async recordOf(userId: string): Promise<PairingRecord | undefined> {
    return parsePairing(await this.options.store.get<unknown>(pairedKey(userId)));
  }

  /**
   * The short refusal for a user who is not allowed, or undefined when they were told within the
   * last hour (one reply, not one per message). In an allowed group, it says only members may.
   */
  async refusal(chat: AccessChat, user: AccessUser): Promise<string | undefined> {
    if (!(await this.firstThisHour(`${chat.id}:${user.id}`))) return undefined;
    const now = this.now();
    const listed = this.listsChat(chat);
    const ways = [
      "add it to TELEGRAM_ALLOWED_USERS",
      ...(chat.type === "private" || listed
        ? []
        : [`allow this whole group by adding chat id ${chat.id} to allowed_chats`]),
    ];
    const code = await this.issueCode(user, now);
    if (code !== undefined) ways.push(`approve you by sending /pair ${code} to the bot`);
    const why = listed
      ? "Sorry, only members of this group may use this bot here, and I could not confirm that you are one (join the group first)."
      : "Sorry, you are not allowed to use this bot.";
    return `${why} Your Telegram user id is ${user.id}. An admin can ${ways.join(", or ")}.`;
  }

  /**
   * The note for an anonymous group admin who addressed the bot, or undefined when this chat was
   * told within the last hour. Nobody can be authorised or held to account as that sender.
   */
  async anonymousNote(chat: AccessChat): Promise<string | undefined> {
    if (!(await this.firstThisHour(`${chat.id}:anonymous`))) return undefined;
    return (
      "Sorry, I can't work for anonymous group admins: I can't tell who is asking. " +
      'Turn off "Remain anonymous" in your admin rights to talk to me.'
    );
  }

  /**
   * Whether nobody was told under `key` within the budget's hour, by any process on the store; if
   * so, it counts as told now. False when the budget cannot be read or written (logged).
   */
  private async firstThisHour(key: string): Promise<boolean> {
    try {
      return (await this.options.replies.take(`tg:told:${key}`, 1)).ok;
    } catch (error) {
      this.options.logger?.warn(
        { key, err: errorText(error) },
        "telegram: could not count the once-an-hour reply to someone refused; not told",
      );
      return false;
    }
  }

  /** A new pairing code for the person, stored for an hour; undefined when none could be stored. */
  private async issueCode(user: AccessUser, now: number): Promise<string | undefined> {
    const pending: PairCode = { userId: user.id, name: user.name, expiresAt: now + CODE_TTL_MS };
    try {
      for (let attempt = 0; attempt < CODE_ATTEMPTS; attempt++) {
        const code = Array.from(
          { length: CODE_LENGTH },
          () => CODE_ALPHABET[randomInt(CODE_ALPHABET.length)],
        ).join("");
        if (await this.options.store.setIfAbsent(codeKey(code), pending, CODE_TTL_MS)) return code;
      }
      this.options.logger?.warn(
        { userId: user.id },
        "telegram: no free pairing code; refusal sent without one",
      );
    } catch (error) {
      this.options.logger?.warn(
        { userId: user.id, err: errorText(error) },
        "telegram: could not store a pairing code; refusal sent without one",
      );
    }
    return undefined;
  }

  /** The pending code's pairing, taken (removed) by this call; undefined when none is pending. */
  private async takeCode(code: string): Promise<PairCode | undefined> {
    if (!CODE_SHAPE.test(code)) return undefined;
    const pending = PairCodeSchema.safeParse(await this.options.store.get<unknown>(codeKey(code)));
    if (!pending.success || pending.data.expiresAt <= this.now()) return undefined;
    // Removed before the pairing is written: of two approvals at once, only one pairs.
    return (await this.options.store.delete(codeKey(code))) ? pending.data : undefined;
  }

  /** An admin approves a pairing code; returns the reply to show the admin. */
  async approve(admin: AccessUser, rawCode: string | undefined): Promise<string> {
    if (!this.isAdmin(admin.id)) return `${ADMIN_ONLY} approve pairing codes.`;
    const code = (rawCode ?? "").trim().toUpperCase();
    const pending = await this.takeCode(code);
    if (pending === undefined) return `No pending pairing code "${code}" (codes expire after an hour).`;
    const user: AccessUser = { id: pending.userId, name: pending.name };
    const record: PairingRecord = {
      by: String(admin.id),
      byName: admin.name,
      at: new Date(this.now()).toISOString(),
      name: user.name,
    };
    await this.options.store.set(pairedKey(user.id), record);
    await this.index.add(String(user.id));
    this.loggedLapsed.delete(String(user.id));
    return (
      `Approved: ${who(user.name, user.id)} may now use the bot, for as long as you stay in ` +
      `TELEGRAM_ALLOWED_USERS. /pairs lists pairings; /unpair ${user.id} ends this one.`
    );
  }

  /** An admin's `/pairs`: every stored pairing, with who approved it and when. */
  async list(admin: AccessUser): Promise<string> {
    if (!this.isAdmin(admin.id)) return `${ADMIN_ONLY} list pairings.`;
    const ids = await this.index.ids();
    const records = await getAll<unknown>(this.options.store, ids.map(pairedKey));
    const lines: string[] = [];
    ids.forEach((id, i) => {
      const record = parsePairing(records[i]);
      if (record === undefined) return;
      const { by, byName, at, name } = record;
      const approver = by === undefined ? "nobody recorded" : who(byName ?? "", by);
      const lapsed = lapseOf(record, this.admins);
      lines.push(
        `• ${who(name ?? "", id)}: approved by ${approver}${at ? ` on ${at.slice(0, 10)}` : ""}` +
          (lapsed ? ` (no longer counts: ${lapsed})` : ""),
      );
    });
    if (lines.length === 0) return "No paired accounts.";
    return `Paired accounts (each counts while its approver is in TELEGRAM_ALLOWED_USERS; /unpair <user id> ends one):\n${lines.join("\n")}`;
  }

  /** An admin's `/unpair <user id>`: ends that account's pairing. */
  async unpair(admin: AccessUser, rawId: string | undefined): Promise<string> {
    if (!this.isAdmin(admin.id)) return `${ADMIN_ONLY} end pairings.`;
    const id = (rawId ?? "").trim();
    if (!/^\d{1,20}$/.test(id)) return "Usage: /unpair <user id> (see /pairs).";
    const record = await this.recordOf(id);
    if (record === undefined) return `No pairing for user id ${id}.`;
    await this.options.store.delete(pairedKey(id));
    const still = this.admins.has(id) ? " They are still in TELEGRAM_ALLOWED_USERS." : "";
    return `Pairing ended: ${who(record.name ?? "", id)} may no longer use the bot.${still}`;
  }
}

/** "name (user id 42)", or "user id 42" without a name. */
function who(name: string, id: number | string): string {
  return name === "" ? `user id ${id}` : `${name} (user id ${id})`;
}

/** Why a pairing does not count (its approver is unknown or no longer allowed), or undefined when it does. */
function lapseOf(record: PairingRecord, admins: ReadonlySet<string>): string | undefined {
  if (typeof record.by !== "string" || record.by === "") return "it names no approver";
  if (!admins.has(record.by)) return `its approver (user id ${record.by}) is no longer an allowed user`;
  return undefined;
}
