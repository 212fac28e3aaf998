/**
 * Extra thread commands: commands other modules add to the thread's own (e.g. `subscriptions` and
 * `unsubscribe <channel>` from channel subscriptions). They are recognised like the built-in ones:
 * as a slash command, or typed in the thread — plain words count only when they form a complete
 * command (the right number of arguments), so ordinary sentences stay messages; a slash form with
 * wrong arguments gets the usage text.
 */
import type { PlatformUser, ThreadTarget } from "../core/thread-target.js";
import type { ListedItem } from "./item-cards.js";

/** Who runs an extra command, where. */
export interface ExtraCommandCall {
  /** The thread's current session. */
  readonly sessionId: string;
  readonly target: ThreadTarget;
  readonly user: PlatformUser;
  readonly args: readonly string[];
  /**
   * Queue `text` as this person's message in the thread (as if they had typed it) and start the
   * turn when the session is free: how a command such as `skill <name>` starts a turn.
   */
  startTurn(text: string): Promise<"started" | "queued">;
}

/**
 * A standing item a command lists; `here` when it belongs to the conversation the command was
 * sent in (its target is this thread or chat). In a conversation several people share, only those
 * are shown (ModuleCommands.listing): an item not marked `here` is never shown there.
 */
export interface CommandItem extends ListedItem {
  readonly here?: boolean;
}

/**
 * A command's reply: its text, and standing items to post as cards with a Cancel button each
 * (ModuleCommands.listing words the text for where they go).
 */
export interface CommandReply {
  readonly text: string;
  readonly items: readonly CommandItem[];
}

/** A command another module adds; `run` resolves with the reply to show. */
export interface ExtraCommand {
  /** Lower-case command word, e.g. "unsubscribe". */
  readonly name: string;
  /** One help line: "unsubscribe <channel> — stop watching a channel". */
  readonly usage: string;
  readonly minArgs: number;
  readonly maxArgs: number;
  /** Only as a slash command: typed in a thread its word stays an ordinary message. */
  readonly slashOnly?: boolean;
  run(call: ExtraCommandCall): Promise<string | CommandReply>;
}

/** A recognised extra command: run it with these arguments, or answer with the usage error. */
export type ExtraCommandMatch =
  | { readonly ok: true; readonly command: ExtraCommand; readonly args: readonly string[] }
  | { readonly ok: false; readonly error: string };

const SLASH_WORD = /^\/([a-z_]+)(@\w+)?$/i;
const FIRST_WORD = /^\s*(\S+)/;

function fits(command: ExtraCommand, args: readonly string[]): boolean {
  return args.length >= command.minArgs && args.length <= command.maxArgs;
}

function usageError(command: ExtraCommand): ExtraCommandMatch {
  return { ok: false, error: `Usage: ${command.usage}` };
}

/** A command word as the session layer reads it: "/Schedules@coworker" is "schedules". */
export function commandWord(name: string): string {
  return name.replace(/^\//, "").replace(/@.*$/, "").toLowerCase();
}

/** The extra command named `name` (a slash command's name and arguments), if there is one. */
export function matchExtraCommand(
  commands: readonly ExtraCommand[],
  name: string,
  args: readonly string[],
): ExtraCommandMatch | undefined {
  const wanted = commandWord(name);
  const command = commands.find((candidate) => candidate.name === wanted);
  if (!command) return undefined;
  return fits(command, args) ? { ok: true, command, args } : usageError(command);
}

/** An extra command typed as a thread message, or undefined for an ordinary message. */
export function matchExtraTextCommand(
  commands: readonly ExtraCommand[],
  text: string,
): ExtraCommandMatch | undefined {
  // The first word names the command; the rest of a message (most are no command) is not split.
  const first = FIRST_WORD.exec(text)?.[1];
  if (first === undefined) return undefined;
  const slash = SLASH_WORD.exec(first);
  const command = commands.find((candidate) => candidate.name === (slash?.[1] ?? first).toLowerCase());
  if (!command || command.slashOnly) return undefined;
  const args = text.trim().split(/\s+/).slice(1);
  if (fits(command, args)) return { ok: true, command, args };
  return slash ? usageError(command) : undefined;
}
