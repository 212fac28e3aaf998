/**
 * ModuleCommands: the thread commands other modules contribute (subscriptions, schedules, skills —
 * `extraCommands`), matched as slash commands or typed text and run with what a command may do:
 * start a turn in the conversation (a skill run) and reply with standing items posted as cards (or
 * written into a reply only the person sees).
 * Kept apart from the SessionManager so the manager only routes; a failing command becomes a reply.
 */
import type { Logger } from "pino";
import {
  type CommandReply,
  type ExtraCommand,
  matchExtraCommand,
  matchExtraTextCommand,
} from "./extra-commands.js";
import type { ItemCards } from "./item-cards.js";
import type { PlatformUser, ThreadTarget } from "../core/thread-target.js";
import type { SessionCache } from "./session-cache.js";
import type { TurnScheduler } from "./turn-scheduler.js";

type Match = NonNullable<ReturnType<typeof matchExtraCommand>>;

/** Ends a listing shown to the person alone: where its Cancel buttons are. */
const PRIVATE_LISTING_NOTE =
  "Only you see this list. Send the same command in a direct message with me to get a Cancel button for each.";

export interface ModuleCommandsDeps {
  readonly commands: readonly ExtraCommand[];
  readonly cache: SessionCache;
  readonly scheduler: TurnScheduler;
  readonly items: ItemCards;
  readonly logger: Logger;
  readonly now: () => Date;
}

/** Matches and runs the contributed commands of one SessionManager. */
export class ModuleCommands {
  constructor(private readonly deps: ModuleCommandsDeps) {}

  /** The contributed command a slash command names, if any. */
  matchSlash(name: string, args: readonly string[]): Match | undefined {
    return matchExtraCommand(this.deps.commands, name, args);
  }

  /** The contributed command a typed message is, if any. */
  matchText(text: string): Match | undefined {
    return matchExtraTextCommand(this.deps.commands, text);
  }

  /** Run a matched command in `target`'s conversation; its reply, items as cards to post after the text. */
  async run(target: ThreadTarget, user: PlatformUser, match: Match): Promise<CommandReply> {
    if (!match.ok) return { text: match.error, items: [] };
    const live = await this.deps.cache.forTarget(target, user);
    const startTurn = (text: string): Promise<"started" | "queued"> => {
      const sentAt = this.deps.now().toISOString();
      const extra = target.extra === undefined ? {} : { targetExtra: target.extra };
      return this.deps.scheduler.submit(live, { user, text, files: [], sentAt, ...extra });
    };
    try {
      const reply = await match.command.run({
        sessionId: live.id,
        target,
        user,
        args: match.args,
        startTurn,
      });
      return typeof reply === "string" ? { text: reply, items: [] } : reply;
    } catch (error) {
      this.deps.logger.error({ err: error, command: match.command.name }, "a thread command failed");
      const reason = error instanceof Error ? error.message : String(error);
      return { text: `The ${match.command.name} command failed: ${reason}`, items: [] };
    }
  }

  /**
   * What to show of `reply`: its text, and the standing items to post as cards with a Cancel
   * button each after it — or, shown `privately` (to the person alone, while cards would be seen by
   * the whole conversation), the items written into the text and no cards.
   */
  listing(
    reply: CommandReply,
    privately = false,
  ): { readonly text: string; readonly cards: CommandReply["items"] } {
    if (reply.items.length === 0) return { text: reply.text, cards: [] };
    if (!privately) return { text: `${reply.text} each on a card with a Cancel button`, cards: reply.items };
    const lines = reply.items.map((item) => `- ${item.text}`);
    return { text: [reply.text, ...lines, PRIVATE_LISTING_NOTE].join("\n"), cards: [] };
  }

  /** Post a reply's standing items as cards with a Cancel button each (a failure is logged). */
  async postItems(target: ThreadTarget, items: CommandReply["items"]): Promise<void> {
    if (items.length === 0) return;
    try {
      await this.deps.items.post(target, items);
    } catch (error) {
      this.deps.logger.warn({ err: error }, "posting item cards failed");
    }
  }
}
