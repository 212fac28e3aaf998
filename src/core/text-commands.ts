/**
 * Thread commands: the words people type in a thread (or send as slash commands) to control a
 * session — stop, new, mode, model, status, grants, approve, deny, reviewer. One parser serves both the
 * text form ("mode auto" in a thread) and the explicit form (`command(target, user, name, args)`).
 * It is core's: ask_user's schema reads it too, to refuse an option that, typed, would be a command.
 */
import { MODEL_NAME, MODEL_NAME_CHARACTERS } from "./model-name.js";
import { PERMISSION_MODES, type PermissionMode, permissionModeSchema } from "./modes.js";

export type ThreadCommand =
  | { readonly name: "stop" }
  | { readonly name: "new" }
  | { readonly name: "mode"; readonly mode: PermissionMode }
  | { readonly name: "model"; readonly model: string }
  | { readonly name: "status" }
  | { readonly name: "grants" }
  | { readonly name: "grants-revoke"; readonly index?: number }
  | { readonly name: "approve"; readonly id: string }
  | { readonly name: "deny"; readonly id: string }
  | { readonly name: "reviewer" };

export type ParsedCommand =
  | { readonly ok: true; readonly command: ThreadCommand }
  | { readonly ok: false; readonly error: string };

export const COMMAND_NAMES = [
  "stop",
  "new",
  "mode",
  "model",
  "status",
  "grants",
  "approve",
  "deny",
  "reviewer",
] as const;

/** "/new" or "/new@MyBot" — not a path such as "/etc/hosts". */
const SLASH_COMMAND = /^\/[a-z_]+(@\w+)?$/i;
/** A slash command addressed to a bot by name, as Telegram writes it: "/new@MyBot" → "MyBot". */
const ADDRESSED_COMMAND = /^\/\w+@(\w+)/;
const PENDING_ID = /^[A-Za-z0-9_-]{1,24}$/;
const FIRST_WORD = /\S+/;

export const COMMAND_HELP = [
  "stop — interrupt the running turn",
  "new — start a fresh session in this thread",
  `mode <${PERMISSION_MODES.join("|")}> — change the permission mode`,
  "model <name> — switch the model",
  "status — session, mode, model, grants and usage",
  "grants — list standing grants · grants revoke [n] — revoke one (or all)",
  "approve <id> / deny <id> — decide a pending approval",
  "reviewer — the safety reviewer's verdicts, agreement with people and token cost",
].join("\n");

/** Parse an explicit command; unknown names and bad arguments come back as a readable error. */
export function parseCommand(rawName: string, args: readonly string[]): ParsedCommand {
  const name = normaliseName(rawName);
  const fail = (error: string): ParsedCommand => ({ ok: false, error });
  const done = (command: ThreadCommand): ParsedCommand => ({ ok: true, command });
  const noArgs = (command: ThreadCommand) =>
    args.length === 0 ? done(command) : fail(`"${name}" takes no arguments.`);
  switch (name) {
    case "stop":
    case "new":
    case "status":
    case "reviewer":
      return noArgs({ name });
    case "mode": {
      const mode = permissionModeSchema.safeParse(args[0]?.toLowerCase());
      if (args.length !== 1 || !mode.success) return fail(`Usage: mode <${PERMISSION_MODES.join("|")}>`);
      return done({ name, mode: mode.data });
    }
    case "model": {
      const model = args[0];
      if (args.length !== 1 || model === undefined || !MODEL_NAME.test(model))
        return fail(`Usage: model <name> (${MODEL_NAME_CHARACTERS})`);
      return done({ name, model });
    }
    case "grants": {
      if (args.length === 0) return done({ name: "grants" });
      if (args[0]?.toLowerCase() !== "revoke" || args.length > 2)
        return fail("Usage: grants | grants revoke [n]");
      if (args.length === 1) return done({ name: "grants-revoke" });
      const index = Number(args[1]);
      if (!Number.isInteger(index) || index < 1)
        return fail("Usage: grants revoke [n] — n is a number from `grants`");
      return done({ name: "grants-revoke", index });
    }
    case "approve":
    case "deny": {
      const id = args[0];
      if (args.length !== 1 || id === undefined || !PENDING_ID.test(id)) return fail(`Usage: ${name} <id>`);
      return done({ name, id });
    }
    default:
      return fail(`Unknown command "${rawName}". Commands:\n${COMMAND_HELP}`);
  }
}

/**
 * Whether the message starts with a slash command addressed to another bot (`/new@OtherBot`, any
 * command word): on a platform where several bots share a chat (Telegram), that command is theirs,
 * never ours. Names compare case-insensitively. Without `ownName` (Slack, the console) no command
 * is another bot's, and an `@name` after a command word is ignored.
 */
export function isAnotherBotsCommand(text: string, ownName: string | undefined): boolean {
  const start = text.trimStart();
  if (ownName === undefined || !start.startsWith("/")) return false;
  const addressee = ADDRESSED_COMMAND.exec(start)?.[1];
  return addressee !== undefined && addressee.toLowerCase() !== ownName.toLowerCase();
}

/**
 * Whether typed text is a command whatever is open, so it never answers a question and no open
 * item need be read for it: a slash form ("/new"), and `stop` (always the brake), case and
 * spacing aside.
 */
export function alwaysCommand(text: string): boolean {
  return text.trimStart().startsWith("/") || text.trim().toLowerCase() === "stop";
}

/**
 * Recognise a command typed as a thread message. Plain words count only when they form a complete,
 * valid command ("stop", "mode auto"), so ordinary sentences that start with a command word stay
 * messages; with a slash ("/mode@MyBot banana") a known command word is a command even when its
 * arguments are wrong, so the person gets the usage text. Unknown words ("/start") stay messages.
 * `ownName` is the bot's own name on a platform that addresses commands to a bot (Telegram's
 * username): a command addressed to another name (`/new@OtherBot`) is not a command here.
 * Returns undefined for ordinary messages.
 */
export function parseTextCommand(text: string, ownName?: string): ParsedCommand | undefined {
  if (isAnotherBotsCommand(text, ownName)) return undefined;
  // The first word decides: the rest of an ordinary message is never split into words.
  const first = FIRST_WORD.exec(text)?.[0];
  if (first === undefined) return undefined;
  const name = normaliseName(first);
  if (!(COMMAND_NAMES as readonly string[]).includes(name)) return undefined;
  const slash = SLASH_COMMAND.test(first);
  const rest = text.trim().split(/\s+/).slice(1);
  const parsed = parseCommand(name, rest);
  return parsed.ok || slash ? parsed : undefined;
}

function normaliseName(raw: string): string {
  const withoutSlash = raw.startsWith("/") ? raw.slice(1) : raw;
  const at = withoutSlash.indexOf("@");
  return (at >= 0 ? withoutSlash.slice(0, at) : withoutSlash).toLowerCase();
}
