/**
 * Groups upgraded to supergroups. Telegram moves a group to a new chat id when it becomes a
 * supergroup, and says so in two ways only: service messages (`migrate_to_chat_id` in the old
 * chat, `migrate_from_chat_id` in the new one), which no user can forge, and a 400 "group chat
 * was upgraded to a supergroup chat" with `parameters.migrate_to_chat_id` on a call to the old id.
 * A migrate_* field anywhere else (in a reply_to_message, say) is never read.
 *
 * What a migration changes, kept small on purpose:
 * - the session: the new chat's messages keep the old chat id as their thread target's channel, so
 *   the session keyed by it simply continues (no session record is moved or copied: that would be
 *   a session-layer change, and the old key stays valid for parked turns and cards already out);
 * - the calls: every Bot API call naming the old chat goes to the new one instead (the API
 *   transformer below), so turns, cards and tools writing to the old id reach the group;
 * - a send that still hits the 400 (a migration not heard of yet, or learnt by another process) is
 *   re-sent once to the new id, without its reply reference (message ids differ there), and so is
 *   a read of the chat (getChat, getChatMember, …): a subscription or check naming the group's id
 *   gets its answer, and the migration is learnt on the way, so the supergroup's messages are
 *   reported under that id from then on;
 * - access: the new chat is allowed exactly when the old one was (or when it is listed itself).
 *
 * The mapping is persisted both ways in the store space given (the pairing space), so it survives
 * restarts and reaches the other processes; each process also keeps what it has looked up.
 * Supergroups never migrate again, so the mapping is one step deep.
 */
import type { Transformer } from "grammy";
import type { Logger } from "pino";
import type { KeyValueSpace } from "../../store/store.js";
import { telegramIdOf } from "./telegram-send.js";

interface StoredMigration {
  readonly chat: number;
  readonly at: string;
}

/** How the channel heard of a migration (logged). */
export type MigrationSource = "service message" | "send error";

/** The most ids each lookup cache holds. */
const MEMORY_CAP = 10_000;

const toKey = (oldId: number) => `tg:migrated-to:${oldId}`;
const fromKey = (newId: number) => `tg:migrated-from:${newId}`;

/** Methods whose call is a new message or action, or a read, re-sent to the new chat after the 400. */
const RESENT: ReadonlySet<string> = new Set([
  "sendMessage",
  "sendDocument",
  "sendPhoto",
  "sendChatAction",
  "copyMessage",
  "forwardMessage",
  "getChat",
  "getChatMember",
  "getChatAdministrators",
  "getChatMemberCount",
]);

function isChatId(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value < 0;
}

/** The chat a call's payload names, when it names one. */
function chatIdOf(payload: unknown): number | undefined {
  return telegramIdOf((payload as { chat_id?: unknown } | undefined)?.chat_id);
}

/** The group ↔ supergroup mapping (see module comment). */
export class ChatMigrations {
  /** Old group id → its supergroup's id, or null when looked up and none is known. */
  private readonly forward = new Map<number, number | null>();
  /** Supergroup id → the group it came from, or null when looked up and none is known. */
  private readonly backward = new Map<number, number | null>();

  constructor(private readonly options: { readonly store: KeyValueSpace; readonly logger: Logger }) {}

  /**
   * Learn a migration Telegram told of. Returns whether it was news to this process. Ids that
   * cannot be a group and its supergroup (not negative, or the same) are ignored.
   */
  async record(oldId: number, newId: number, source: MigrationSource): Promise<boolean> {
    if (!isChatId(oldId) || !isChatId(newId) || oldId === newId) return false;
    if (this.forward.get(oldId) === newId && this.backward.get(newId) === oldId) return false;
    this.remember(this.forward, oldId, newId);
    this.remember(this.backward, newId, oldId);
    const at = new Date().toISOString();
    try {
      await this.options.store.set(toKey(oldId), { chat: newId, at } satisfies StoredMigration);
      await this.options.store.set(fromKey(newId), { chat: oldId, at } satisfies StoredMigration);
    } catch (error) {
      // Followed in this process all the same; the next service message or 400 tries again.
      this.options.logger.warn(
        { err: String(error), oldChatId: oldId, newChatId: newId },
        "telegram: could not store a group's migration",
      );
    }
    this.options.logger.info(
      { oldChatId: oldId, newChatId: newId, source },
      "telegram: group migrated to a supergroup; following it",
    );
    return true;
  }

  /** The chat whose session (and access) a chat continues: the group it was migrated from, or itself. */
  async originOf(chatId: number): Promise<number> {
    return (await this.lookUp(this.backward, fromKey, chatId)) ?? chatId;
  }

  /** Where calls to a chat go now: its supergroup when it was migrated, or itself. */
  async currentOf(chatId: number): Promise<number> {
    return (await this.lookUp(this.forward, toKey, chatId)) ?? chatId;
  }

  private async lookUp(
    cache: Map<number, number | null>,
    key: (id: number) => string,
    chatId: number,
  ): Promise<number | undefined> {
    if (!isChatId(chatId)) return undefined;
    const known = cache.get(chatId);
    if (known !== undefined) return known ?? undefined;
    const stored = await this.options.store.get<StoredMigration>(key(chatId));
    const found = stored && isChatId(stored.chat) ? stored.chat : undefined;
    this.remember(cache, chatId, found ?? null);
    return found;
  }

  private remember(cache: Map<number, number | null>, key: number, value: number | null): void {
    if (cache.size >= MEMORY_CAP && !cache.has(key)) cache.clear();
    cache.set(key, value);
  }

  /**
   * The API transformer: a call naming a migrated group goes to its supergroup; a send that gets
   * the migration 400 is recorded and re-sent once to the new id.
   */
  transformer(): Transformer {
    const routed: Transformer = async (prev, method, payload, signal) => {
      const named = chatIdOf(payload) as number;
      const current = await this.currentOf(named);
      const sent = current === named ? payload : { ...payload, chat_id: current };
      const result = await prev(method, sent, signal);
      const movedTo = result.ok ? undefined : result.parameters?.migrate_to_chat_id;
      if (result.ok || result.error_code !== 400 || !isChatId(movedTo)) return result;
      await this.record(current, movedTo, "send error");
      if (!RESENT.has(method)) return result;
      const {
        reply_parameters: _reply,
        reply_to_message_id: _replyTo,
        ...rest
      } = sent as typeof sent & {
        reply_parameters?: unknown;
        reply_to_message_id?: unknown;
      };
      return prev(method, { ...rest, chat_id: movedTo } as typeof sent, signal);
    };
    // Calls naming no group (a person's chat, or none) pass straight through, adding no promise.
    return (prev, method, payload, signal) =>
      isChatId(chatIdOf(payload)) ? routed(prev, method, payload, signal) : prev(method, payload, signal);
  }
}
