/**
 * Test support: every message a session's stored history holds, oldest first (less the pages
 * pruned; [] for an unknown session), read the way the product reads it — `HistoryLog.open` —
 * with no window budget, so a test sees the whole history however long it grew.
 */
import type { ConversationMessage } from "../../src/core/messages.js";
import { HistoryLog } from "../../src/store/history-log.js";
import type { KeyValueSpace } from "../../src/store/store.js";

const WHOLE = { messages: Number.POSITIVE_INFINITY, bytes: Number.POSITIVE_INFINITY } as const;

/** The stored history of `sessionId` in `space` (the store's "history" space). */
export async function storedHistory(
  space: KeyValueSpace,
  sessionId: string,
): Promise<readonly ConversationMessage[]> {
  return (await new HistoryLog(space, { window: WHOLE }).open(sessionId)).messages;
}
