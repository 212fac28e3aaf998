/**
 * The gate a message addressed to the bot passes before anything runs for it (a turn, a command,
 * an album's hand-over): whether its sender may use the bot in its chat (telegram-access.ts), and
 * if so the session it belongs to and a way to answer there. A supergroup that was a group
 * continues the group's session and is allowed where the group was (telegram-migrated-chats.ts).
 * A stranger gets the one refusal an hour, whatever they send (/start and /pair included), never a
 * reply per message: that would let anyone spend the bot's send rate. Their /start's refusal says
 * what the bot is first (INTRODUCTION).
 */
import type { Logger } from "pino";
import type { ThreadOutput } from "../../core/thread-output.js";
import type { ThreadTarget } from "../../core/thread-target.js";
import type { AccessUser, TelegramAccess } from "./telegram-access.js";
import { INTRODUCTION } from "./telegram-access-commands.js";
import { type TelegramMessage, targetOf, userOf } from "./telegram-inbound.js";
import { accessChatOf } from "./telegram-migrated-chats.js";
import type { ChatMigrations } from "./telegram-migrations.js";

/** What the gate needs: the access, the chats' migrations, the way to answer, a logger. */
export interface AdmissionDeps {
  readonly access: TelegramAccess;
  /** Groups upgraded to supergroups: their sessions and access carry over. */
  readonly migrations: ChatMigrations;
  readonly outputFor: (target: ThreadTarget) => ThreadOutput;
  readonly logger: Logger;
}

/** A sender who may use the bot here: their message's session, a way to answer there, who they are. */
export interface Admitted {
  readonly target: ThreadTarget;
  readonly tell: (text: string) => Promise<void>;
  readonly user: AccessUser;
}

/**
 * Whether the sender of `message` (the `command` it is, if any) may use the bot in its chat: who
 * they are and where to answer when so; a stranger is refused instead (see module comment).
 */
export async function admit(
  message: TelegramMessage,
  deps: AdmissionDeps,
  command?: string,
): Promise<Admitted | undefined> {
  const from = message.from!;
  const chat = await accessChatOf(message.chat, deps.migrations);
  const target = targetOf(message, chat.alsoKnownAs);
  // The thread output is only needed to answer here (most messages just start a turn).
  const tell = (text: string) => deps.outputFor(target).postText(text);
  const user = { id: from.id, name: userOf(from).name };
  if (await deps.access.allows(chat, user)) return { target, tell, user };
  const refusal = await deps.access.refusal(chat, user);
  deps.logger.info(
    { userId: from.id, chatId: message.chat.id, told: refusal !== undefined },
    "telegram: refused",
  );
  if (refusal) await tell(command === "start" ? `${INTRODUCTION}\n\n${refusal}` : refusal);
  return undefined;
}
