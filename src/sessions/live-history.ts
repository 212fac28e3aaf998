/**
 * Live history: how a session loaded into memory opens its stored history. Only the newest
 * messages are read (store/history-window.ts), from the compaction summary's anchor on when the
 * session has one — the messages before it reach the model as the summary — and the pages no open
 * reads again are pruned then, so a session's storage stops growing with its age. The record's
 * starter, for a record stored before starters were kept, is looked for only in a history read
 * from its first message.
 */
import type { Logger } from "pino";
import type { ConversationMessage } from "../core/messages.js";
import type { HistoryLog, SessionHistory } from "../store/history-log.js";

/** What opening a live session's history uses. */
export interface LiveHistoryStores {
  readonly history: HistoryLog;
  /** Where a failed prune is reported. */
  readonly logger: Logger;
  /**
   * The index of the last message the session's compaction summary covers (its anchor), if it
   * has one: the history is read from there. Never rejects. None: the newest messages are read
   * all the same.
   */
  readonly compactionAnchor?: (sessionId: string) => Promise<number | undefined>;
}

/** Open session `sessionId`'s history and prune its old pages; a failed prune is logged (the next load tries again). */
export async function openLiveHistory(sessionId: string, stores: LiveHistoryStores): Promise<SessionHistory> {
  const from = stores.compactionAnchor?.(sessionId);
  const log = await stores.history.open(sessionId, from === undefined ? {} : { from });
  try {
    await log.prune();
  } catch (error) {
    stores.logger.warn({ err: error, sessionId }, "the session's oldest history pages could not be pruned");
  }
  return log;
}

/**
 * The history withStarter may read for a record's starter: only one read from its first message
 * — a window that starts later would name whoever wrote first in it.
 */
export function openingOf(log: SessionHistory): readonly ConversationMessage[] {
  return log.start === 0 ? log.messages : [];
}
