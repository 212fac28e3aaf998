/**
 * Session hooks: several modules (channel subscriptions, scheduled tasks, …) each hand the
 * SessionManager status lines, idle and turn-end listeners, thread commands, item cancellers and
 * the listeners told of a thread's switch to a new session;
 * this merges them into one set of options — lines and commands in order, every listener told.
 */
import type { SessionManagerOptions } from "../sessions/session-manager.js";

/** The SessionManager options a module may contribute. */
export type SessionHooks = Partial<
  Pick<
    SessionManagerOptions,
    "statusExtras" | "onIdle" | "onTurnEnd" | "extraCommands" | "itemCancellers" | "onSessionReplaced"
  >
>;

/** One set of hooks that runs each module's in turn. */
export function mergeSessionHooks(...parts: readonly SessionHooks[]): SessionHooks {
  return {
    statusExtras: async (sessionId) => {
      const lines: string[] = [];
      for (const part of parts) lines.push(...((await part.statusExtras?.(sessionId)) ?? []));
      return lines;
    },
    onIdle: (sessionId) => {
      for (const part of parts) part.onIdle?.(sessionId);
    },
    onTurnEnd: (end) => {
      for (const part of parts) part.onTurnEnd?.(end);
    },
    onSessionReplaced: async (oldId, newId) => {
      const failures: unknown[] = [];
      for (const part of parts)
        await part.onSessionReplaced?.(oldId, newId).catch((e: unknown) => failures.push(e));
      if (failures.length > 0)
        throw new AggregateError(failures, "moving standing items to the new session failed");
    },
    extraCommands: parts.flatMap((part) => part.extraCommands ?? []),
    itemCancellers: parts.flatMap((part) => part.itemCancellers ?? []),
  };
}
