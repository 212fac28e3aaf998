/**
 * The access commands: /start (what this bot is, and for an allowed user the commands they may
 * send) and the pairing commands an allowed user approves others with (/pair <code>, /pairs,
 * /unpair <user id>). They act on who may use the bot (telegram-access.ts), which the channel owns,
 * so the channel answers them itself, at once, never through the session layer or a hand-over
 * lane: they change nothing an earlier message of the sender meets. Like any command, each runs
 * once per update and never fails in silence (telegram-command-runs.ts). /pairs and /unpair name
 * paired accounts and their approvers, so they are answered in a private chat only. A stranger's
 * /start gets the introduction with the one refusal an hour (telegram-admission.ts).
 */
import type { AccessUser, TelegramAccess } from "./telegram-access.js";
import { replyOf, runOnce } from "./telegram-command-runs.js";
import type { Delivered, HandOverDeps } from "./telegram-hand-over.js";

/** What answering an access command needs: the access, and what a command's run needs. */
export interface AccessCommandDeps extends Pick<HandOverDeps, "service" | "bot" | "logger"> {
  readonly access: TelegramAccess;
}

/** The bot in a sentence: the start of every answer to /start, a stranger's too. */
export const INTRODUCTION =
  "I am Coworker, an AI agent that can use tools (files, shell, web) in this chat, asking before risky steps.";

const ACCESS_COMMANDS: ReadonlySet<string> = new Set(["start", "pair", "pairs", "unpair"]);

/** Whether command `name` is an access command, which the channel answers itself (see module comment). */
export function isAccessCommand(name: string): boolean {
  return ACCESS_COMMANDS.has(name);
}

/** The answer to /start for someone who may use the bot; an admin also learns the pairing commands. */
function startText(userId: number, admin: boolean): string {
  return (
    `${INTRODUCTION}\n\n` +
    `Your Telegram user id is ${userId}. You have access: write to me here, or mention me in a group.\n\n` +
    "Commands: /new, /stop, /mode, /model, /status, /grants, /skills, /skill." +
    (admin
      ? "\n\nAs an allowed user you approve others: /pair <code> (the code in their refusal), " +
        "/pairs lists pairings, /unpair <user id> ends one. A pairing lasts while its approver stays allowed."
      : "")
  );
}

/** The answer to access command `name` with `args`, sent in `delivered` by `user`, who may use the bot. */
function replyTo(
  name: string,
  args: readonly string[],
  delivered: Delivered,
  user: AccessUser,
  deps: AccessCommandDeps,
): Promise<string> | string {
  if (name === "start") return startText(user.id, deps.access.isAdmin(user.id));
  if (name === "pair") return deps.access.approve(user, args[0]);
  // The list names every paired account and its approver: not for a group's other members.
  if (delivered.message.chat.type !== "private") return `Send /${name} to me in a private chat.`;
  if (name === "pairs") return deps.access.list(user);
  return deps.access.unpair(user, args[0]);
}

/**
 * Answer the access command `command` (isAccessCommand) of `user`, the admitted sender of
 * `delivered`, through `tell`, once per update (runOnce); one that fails is answered as any failed
 * command is (replyOf).
 */
export async function answerAccessCommand(
  delivered: Delivered,
  command: { readonly name: string; readonly args: readonly string[] },
  user: AccessUser,
  tell: (text: string) => Promise<void>,
  deps: AccessCommandDeps,
): Promise<void> {
  const { name, args } = command;
  const answer = async () => replyTo(name, args, delivered, user, deps);
  await runOnce(delivered, name, async () => tell(await replyOf(name, answer, deps)), tell, deps);
}
