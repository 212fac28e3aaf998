/**
 * Session hooks: several modules (channel subscriptions, scheduled tasks, …) each hand the
 * SessionManager status lines, idle and turn-end listeners, thread commands and item cancellers;
 * this merges them into one set of options — lines and commands in order, every listener told.
 */
import type { SessionManagerOptions } from "../sessions/session-manager.js";

/** The SessionManager options a module may contribute. */
export type SessionHooks = Partial<
  Pick<SessionManagerOptions, "statusExtras" | "onIdle" | "onTurnEnd" | "extraCommands" | "itemCancellers">
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
    extraCommands: parts.flatMap((part) => part.extraCommands ?? []),
    itemCancellers: parts.flatMap((part) => part.itemCancellers ?? []),
  };
}
