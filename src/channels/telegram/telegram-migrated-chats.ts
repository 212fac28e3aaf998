/**
 * Which chat an update belongs to when a group was upgraded to a supergroup (the mapping itself is
 * telegram-migrations.ts): the upgrade's service messages are recorded, and a supergroup's updates
 * are handled under the group it was — the session (and subscriptions) keep the group's id, and
 * access sees both ids, so a listing of either one allows it.
 */
import type { AccessChat } from "./telegram-access.js";
import type { TelegramMessage } from "./telegram-inbound.js";
import type { ChatMigrations } from "./telegram-migrations.js";

/**
 * A group's upgrade, as its service messages tell it (only a top-level message of a `message`
 * update: no user can send one). True when the message was one.
 */
export async function followMigration(
  message: TelegramMessage,
  migrations: ChatMigrations,
): Promise<boolean> {
  const { chat } = message;
  if (message.migrate_from_chat_id !== undefined && chat.type === "supergroup") {
    await migrations.record(message.migrate_from_chat_id, chat.id, "service message");
    return true;
  }
  if (message.migrate_to_chat_id !== undefined && chat.type === "group") {
    await migrations.record(chat.id, message.migrate_to_chat_id, "service message");
    return true;
  }
  return false;
}

/** The chat whose session (and subscriptions) a chat continues: the group a supergroup was, or itself. */
export async function sessionChatOf(
  chat: { id: number; type: string },
  migrations: ChatMigrations,
): Promise<number> {
  return chat.type === "supergroup" ? migrations.originOf(chat.id) : chat.id;
}

/**
 * The chat as access sees it: with the group it was upgraded from, whose listing carries over.
 * Only a supergroup can have been a group: any other chat is itself, with nothing looked up.
 */
export function accessChatOf(
  chat: { id: number; type: string },
  migrations: ChatMigrations,
): Promise<AccessChat> {
  if (chat.type !== "supergroup") return Promise.resolve(chat);
  return migrations
    .originOf(chat.id)
    .then((origin) => (origin === chat.id ? chat : { id: chat.id, type: chat.type, alsoKnownAs: origin }));
}
