/**
 * Live history: how a session loaded into memory opens its stored history. Only the newest
 * messages are read (store/history-window.ts), from the compaction summary's anchor on when the
 * session has one — the messages before it reach the model as the summary — and the pages no open
 * reads again are pruned then, so a session's storage stops growing with its age. The record's
 * starter, for a record stored before starters were kept, is looked for in the history's first
 * page (the window, or that page read apart while it is not pruned); a starter found on a page a
 * prune would delete keeps it until a load finds the record saved with it. A record whose first
 * page was pruned before any load found its starter stays ownerless (see withStarter). A read by
 * a process that does not hold the session (a press) prunes nothing: it does not save the record,
 * so it could not keep that page for it; the holder's next load prunes.
 */
import type { Logger } from "pino";
import type { ConversationMessage } from "../core/messages.js";
import type { HistoryLog, SessionHistory } from "../store/history-log.js";
import { type SessionRecord, withStarter } from "./session-record.js";

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

/** A session's history as opened, and the messages its record's starter is looked for in. */
export interface OpenedHistory {
  readonly log: SessionHistory;
  /** Its opening when the record needs a starter (withStarter), else none. */
  readonly opening: readonly ConversationMessage[];
}

/** Open session `sessionId`'s history to read it, as a load reads it; nothing is pruned. */
export function readLiveHistory(sessionId: string, stores: LiveHistoryStores): Promise<SessionHistory> {
  return openWindow(sessionId, stores);
}

/**
 * Open the history of `record`'s session with the messages its starter is looked for in, and
 * prune its old pages — unless they hold a starter the record does not have yet.
 */
export async function openRecordHistory(
  record: SessionRecord,
  stores: LiveHistoryStores,
): Promise<OpenedHistory> {
  const log = await openWindow(record.id, stores);
  const opening = await openingOf(record, log, stores);
  const found = !record.startedBy && withStarter(record, opening).startedBy !== undefined;
  if (!found || log.start === 0) await prune(log, record.id, stores);
  return { log, opening };
}

function openWindow(sessionId: string, stores: LiveHistoryStores): Promise<SessionHistory> {
  const from = stores.compactionAnchor?.(sessionId);
  return stores.history.open(sessionId, from === undefined ? {} : { from });
}

async function prune(log: SessionHistory, sessionId: string, stores: LiveHistoryStores): Promise<void> {
  try {
    await log.prune();
  } catch (error) {
    stores.logger.warn({ err: error, sessionId }, "the session's oldest history pages could not be pruned");
  }
}

/**
 * The messages withStarter may read for `record`'s starter: none when it has one; else the
 * history's first page — never a window that starts later, which would name whoever wrote first
 * in it. An unreadable first page is logged and counts as none.
 */
async function openingOf(
  record: SessionRecord,
  log: SessionHistory,
  stores: LiveHistoryStores,
): Promise<readonly ConversationMessage[]> {
  if (record.startedBy) return [];
  if (log.start === 0) return log.messages;
  try {
    return await log.firstPage();
  } catch (error) {
    stores.logger.warn(
      { err: error, sessionId: record.id },
      "the session's first history page could not be read",
    );
    return [];
  }
}
