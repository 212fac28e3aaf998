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
import { isSharedThread, type PlatformUser, type ThreadTarget } from "../core/thread-target.js";
import type { SessionCache } from "./session-cache.js";
import type { TurnScheduler } from "./turn-scheduler.js";

type Match = NonNullable<ReturnType<typeof matchExtraCommand>>;

/** Ends a listing shown to the person alone: where its Cancel buttons are. */
const PRIVATE_LISTING_NOTE =
  "Only you see this list. Send the same command in a direct message with me to get a Cancel button for each.";

/** Ends a listing in a shared conversation that leaves out the person's items from elsewhere. */
const SHARED_LISTING_NOTE =
  "of yours not shown here, where several people read along. Send the same command in a direct message with me to see them all.";

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
   * What to show in `target`'s conversation of `reply`: its text, and the standing items to post
   * as cards with a Cancel button each after it — or, shown `privately` (to the person alone, while
   * cards would be seen by the whole conversation), the items written into the text and no cards.
   * Posted in a conversation several people share (not the person's DM with the bot), only the
   * items that belong to it are shown: the others (their DMs' tasks and instructions among them)
   * are counted, with where to see them all.
   */
  listing(
    target: ThreadTarget,
    reply: CommandReply,
    privately = false,
  ): { readonly text: string; readonly cards: CommandReply["items"] } {
    if (reply.items.length === 0) return { text: reply.text, cards: [] };
    if (privately) {
      const lines = reply.items.map((item) => `- ${item.text}`);
      return { text: [reply.text, ...lines, PRIVATE_LISTING_NOTE].join("\n"), cards: [] };
    }
    if (!isSharedThread(target))
      return { text: `${reply.text} each on a card with a Cancel button`, cards: reply.items };
    const here = reply.items.filter((item) => item.here === true);
    const withheld = reply.items.length - here.length;
    if (withheld === 0) return { text: `${reply.text} each on a card with a Cancel button`, cards: here };
    const count = `${withheld}${here.length > 0 ? " more" : ""} ${withheld === 1 ? "item" : "items"}`;
    const shown = here.length > 0 ? " those of this conversation each on a card with a Cancel button;" : "";
    return { text: `${reply.text}${shown} ${count} ${SHARED_LISTING_NOTE}`, cards: here };
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
