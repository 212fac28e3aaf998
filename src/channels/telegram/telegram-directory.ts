/**
 * TelegramDirectory: the PlatformDirectory for Telegram on grammY's `Api`. Chats are found by id
 * or @username (a forum topic as chat:topic) with getChat, members checked with getChatMember
 * (and, for posting, their right to post: not muted in a group, an admin of a broadcast channel),
 * and the bot's own reading rights worked out from its membership and privacy mode (getMe's
 * can_read_all_group_messages): with privacy mode on, only an admin bot sees every group message.
 * Telegram has no history API for bots, so a backfill returns nothing and says so. A supergroup
 * that was a group resolves to the group's id, the id its session and its observed messages keep
 * (telegram-migrations.ts), so its subscriptions are one whichever id is named, and the calls
 * naming that id reach the supergroup through the channel's migration transformer; a stored id
 * is brought to that id the same way (canonicalChannel).
 */
import { type Api, GrammyError } from "grammy";
import type { UserFromGetMe } from "grammy/types";
import { z } from "zod";
import {
  type BotIdentity,
  displayName,
  type HistoryPage,
  type ReadAccess,
  type ResolvedChannel,
  type ResolveResult,
} from "../../subscriptions/platform-directory.js";
import type { PostingDirectory } from "../shared/posting-access.js";

export interface TelegramDirectoryOptions {
  /** The bot (getMe, or the botInfo the Bot was created with). */
  readonly botInfo: Pick<UserFromGetMe, "id" | "username">;
  /** ThreadTarget.workspace of Telegram sessions (default "tg"). */
  readonly workspace?: string;
  /** The group a supergroup was upgraded from, or the chat itself (ChatMigrations.originOf). */
  readonly originOf?: (chatId: number) => Promise<number>;
}

const chatSchema = z.looseObject({
  id: z.number().int(),
  type: z.enum(["private", "group", "supergroup", "channel"]),
  title: z.string().optional(),
  username: z.string().optional(),
  is_forum: z.boolean().optional(),
});
type TelegramChat = z.infer<typeof chatSchema>;
const memberSchema = z.looseObject({
  status: z.enum(["creator", "administrator", "member", "restricted", "left", "kicked"]),
  is_member: z.boolean().optional(),
  /** Restricted members only: false when muted. */
  can_send_messages: z.boolean().optional(),
  /** Administrators of broadcast channels only. */
  can_post_messages: z.boolean().optional(),
});
type ChatMember = z.infer<typeof memberSchema>;
const meSchema = z.looseObject({
  id: z.number().int(),
  username: z.string(),
  can_read_all_group_messages: z.boolean().optional(),
});
const CHAT_REF = /^(-?\d{1,20}|@[A-Za-z][A-Za-z0-9_]{3,31})(?::(\d{1,10}))?$/;
/** getChatMember answers for someone who is not (or never was) in the chat. */
const NOT_A_MEMBER = /user not found|member not found|participant_id_invalid|user_id_invalid/i;
const NO_HISTORY =
  "Telegram bots cannot read chat history: only messages I saw while subscribed to the chat are available.";

/** Telegram chats and members for subscriptions. */
export class TelegramDirectory implements PostingDirectory {
  readonly platform = "telegram";
  readonly workspace: string;
  readonly bot: BotIdentity;
  private readonly handle: string;
  private readonly originOf: (chatId: number) => Promise<number>;

  constructor(
    private readonly api: Api,
    options: TelegramDirectoryOptions,
  ) {
    this.workspace = options.workspace ?? "tg";
    this.originOf = options.originOf ?? (async (chatId) => chatId);
    this.bot = Object.freeze({
      userId: String(options.botInfo.id),
      names: Object.freeze([options.botInfo.username]),
    });
    this.handle = `@${options.botInfo.username}`;
  }

  /** Find a group, supergroup or channel by id or @username; "chat:topic" names a forum topic. */
  async resolveChannel(ref: string): Promise<ResolveResult> {
    const match = CHAT_REF.exec(ref);
    if (!match)
      return { ok: false, error: `"${ref}" is not a Telegram chat id (-100…), @username, or chat:topic.` };
    const [, chatRef, topic] = match;
    let chat: TelegramChat;
    try {
      chat = chatSchema.parse(await this.api.getChat(chatRef!));
    } catch (error) {
      if (error instanceof GrammyError && (error.error_code === 400 || error.error_code === 403))
        return {
          ok: false,
          error: `I can't see the chat ${chatRef}: add ${this.handle} to it first (Telegram said "${error.description}").`,
        };
      throw readable(error);
    }
    if (chat.type === "private")
      return {
        ok: false,
        error: `${ref} is a private chat with a person; only groups and channels can be watched.`,
      };
    if (topic !== undefined && !chat.is_forum)
      return { ok: false, error: `${chat.title ?? ref} has no topics; subscribe to the chat itself.` };
    const title = displayName(chat.title ?? (chat.username ? `@${chat.username}` : String(chat.id)));
    const id = chat.type === "supergroup" ? await this.originOf(chat.id) : chat.id;
    return {
      ok: true,
      channel: String(id),
      name: topic === undefined ? title : `${title} (topic ${topic})`,
      ...(topic !== undefined ? { thread: topic } : {}),
      broadcast: chat.type === "channel",
    };
  }

  /**
   * The chat id a stored one stands for now, as resolveChannel finds it: getChat through the
   * channel's migration transformer (a group upgraded without the bot hearing of it answers with
   * the upgrade's 400, and the upgrade is learnt on the way), then a supergroup's former group.
   * Only Telegram's answers and service messages teach an upgrade, so no one can point a chat id
   * at another chat. A chat Telegram does not show the bot keeps its id.
   */
  async canonicalChannel(channel: string): Promise<string> {
    if (!/^-\d{1,20}$/.test(channel)) return channel;
    const resolved = await this.resolveChannel(channel);
    return resolved.ok ? resolved.channel : channel;
  }

  /** getChatMember: owner, admin, member, or restricted but still in the chat. */
  async isMember(channel: string, userId: string): Promise<boolean> {
    const member = await this.member(channel, userId);
    return member !== undefined && isIn(member);
  }

  /**
   * Whether the person may post there: in a group, a member who is not muted (restricted without
   * can_send_messages); in a broadcast channel, only its creator and admins with can_post_messages.
   * The chat's kind comes from resolveChannel, which has just asked getChat.
   */
  async mayPost(channel: ResolvedChannel, userId: string): Promise<boolean> {
    const member = await this.member(channel.channel, userId);
    if (member === undefined) return false;
    if (channel.broadcast)
      return (
        member.status === "creator" ||
        (member.status === "administrator" && member.can_post_messages === true)
      );
    return isIn(member) && (member.status !== "restricted" || member.can_send_messages === true);
  }

  /** The person's getChatMember record, or undefined when Telegram does not know them there. */
  private async member(channel: string, userId: string): Promise<ChatMember | undefined> {
    if (!/^\d{1,20}$/.test(userId)) return undefined;
    try {
      return memberSchema.parse(await this.api.getChatMember(channel, Number(userId)));
    } catch (error) {
      if (error instanceof GrammyError && error.error_code === 400 && NOT_A_MEMBER.test(error.description))
        return undefined;
      if (error instanceof GrammyError && /chat_admin_required/i.test(error.description))
        throw new Error(
          `Telegram lets only admins check this group's members: make ${this.handle} an admin there`,
        );
      throw readable(error);
    }
  }

  /** The bot must be in the chat and see every message: an admin, or privacy mode off (channels: admin). */
  async ensureBotCanRead(channel: string): Promise<ReadAccess> {
    const chat = chatSchema.parse(await call(() => this.api.getChat(channel)));
    const title = displayName(chat.title ?? channel);
    const me = meSchema.parse(await call(() => this.api.getMe()));
    const member = memberSchema.parse(await call(() => this.api.getChatMember(channel, me.id)));
    if (!isIn(member)) return { ok: false, whatToDo: `add ${this.handle} to ${title} first.` };
    if (member.status === "administrator" || member.status === "creator") return { ok: true };
    if (chat.type === "channel")
      return {
        ok: false,
        whatToDo: `make ${this.handle} an administrator of the channel ${title} so it receives posts.`,
      };
    if (me.can_read_all_group_messages) return { ok: true };
    return {
      ok: false,
      whatToDo: `with privacy mode on I only see commands and mentions in ${title}: make ${this.handle} an admin there, or disable privacy mode with @BotFather /setprivacy → Disable (then remove ${this.handle} from the group and add it again so the change applies).`,
    };
  }

  /** Telegram has no history API for bots: nothing to backfill. */
  async history(): Promise<HistoryPage> {
    return { entries: [], note: NO_HISTORY };
  }
}

function isIn(member: ChatMember): boolean {
  if (member.status === "restricted") return member.is_member === true;
  return member.status === "creator" || member.status === "administrator" || member.status === "member";
}

async function call<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw readable(error);
  }
}

/** Telegram's failure with a readable message, its GrammyError (code, retry_after) kept as the cause. */
function readable(error: unknown): Error {
  if (error instanceof GrammyError)
    return new Error(`Telegram answered ${error.error_code} "${error.description}"`, { cause: error });
  return error instanceof Error ? error : new Error(String(error));
}
