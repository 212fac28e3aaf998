/**
 * HistoryLog: a session's conversation history as an append-only paged log in one KeyValueSpace.
 * A small head `{ count, pageSize, pages }` plus fixed-size pages of messages; an append rewrites
 * only the last page and then the head (the head is the commit point; both go out in one
 * `setMany`, a single commit on SQLite), so the cost of an append does not grow with the session.
 * Each page carries the size of its messages' JSON, which an append extends by its new messages'
 * (each measured once), so an open counts bytes without serialising what it read; the open page's
 * messages are kept as their JSON text, which an append writes again (store/json-text.ts), so it
 * serialises only its new messages. Pages are validated when read. A session's live writer opens
 * it as a SessionHistory, which keeps the head and the open page in memory so appends read nothing
 * back. Opening reads only the newest pages (history-window.ts), so it costs the same however long
 * the session has run; the pages before them are never read again, and `prune` deletes them.
 * Pruning writes no head — so it cannot race a writer's append, in this process or another — only
 * the deletes and then a mark, `pruned:<session>`, that says which pages are gone (opens never read
 * below it). The mark only rises (a compare-and-set, atomic across processes): opens that read
 * different heads prune to different pages, and the one pruning least may finish last. The stored
 * records, their keys and page sizing are in history-records.ts.
 */
import { deepFreeze, frozenConcat } from "../core/deep-freeze.js";
import type { ConversationMessage } from "../core/messages.js";
import {
  EMPTY_PAGE_BYTES,
  grown,
  HISTORY_HEAD_KIND,
  HISTORY_PRUNED_KIND,
  type HistoryHead,
  historyHeadKey,
  historyPageKey,
  historyPrunedKey,
  pageEntry,
  parseHead,
  parseMark,
  storedPage,
} from "./history-records.js";
import {
  HISTORY_WINDOW,
  type HistoryWindow,
  type HistoryWindowBudget,
  readWindow,
  type WindowPage,
} from "./history-window.js";
import { conversationMessageSchema } from "./message-schema.js";
import { getAll, type KeyValueSpace, type SpaceEntry, setAll } from "./store.js";
import { updateByCompareAndSet } from "./update-by-compare-and-set.js";
import { describeIssues, toVersioned } from "./versioned.js";

/**
 * Messages per page for sessions created with default options. An append rewrites the open page,
 * so small pages keep appends cheap when messages are large (tool output); opening reads the
 * newest pages in a few batches (one round trip each). A turn appends two messages at least, so the
 * open page holds about five on average (25 made it a dozen, half of what a turn serialised).
 * Sessions keep the page size they were created with (it is in their head).
 */
export const DEFAULT_HISTORY_PAGE_SIZE = 10;
/** Longest session id accepted (keys must fit the store's key limit with their prefix). */
export const MAX_HISTORY_SESSION_ID_LENGTH = 180;
/** Writes of the pruned mark a prune tries, each over the mark read last, before it gives up. */
const MAX_MARK_ATTEMPTS = 16;

/** A paged, append-only message log per session. */
export class HistoryLog {
  private readonly pageSize: number;
  private readonly window: HistoryWindowBudget;

  /**
   * `pageSize` applies to sessions created from now on; existing sessions keep the size in their
   * head. `window`: what an open reads at most (HISTORY_WINDOW; every process on a store uses the same).
   */
  constructor(
    private readonly space: KeyValueSpace,
    options: { readonly pageSize?: number; readonly window?: HistoryWindowBudget } = {},
  ) {
    this.window = options.window ?? HISTORY_WINDOW;
    const pageSize = options.pageSize ?? DEFAULT_HISTORY_PAGE_SIZE;
    if (!Number.isSafeInteger(pageSize) || pageSize < 1) {
      throw new Error(`HistoryLog pageSize must be a positive whole number, got ${pageSize}`);
    }
    this.pageSize = pageSize;
  }

  /**
   * Open a session's history for its only writer: its newest messages (validated, deep-frozen;
   * history-window.ts) and appends that need no reads. `from` (awaited beside the head's read):
   * the oldest message needed (the summary's anchor); the pages before its page are not read.
   */
  async open(
    sessionId: string,
    options: { readonly from?: number | Promise<number | undefined> } = {},
  ): Promise<SessionHistory> {
    checkSessionId(sessionId);
    const [[head, pruned], from] = await Promise.all([this.readHeadAndMark(sessionId), options.from]);
    if (!head) return this.openNew(sessionId);
    const window = await readWindow(head, {
      budget: this.window,
      lowest: pruned,
      from,
      readPages: (indexes) => readPages(this.space, sessionId, head, indexes),
    });
    return new SessionHistory(this.space, sessionId, head, window, pruned);
  }

  /** A SessionHistory for a session created just now: empty, and nothing is read. */
  openNew(sessionId: string): SessionHistory {
    checkSessionId(sessionId);
    const window = { start: 0, messages: [], prunable: 0, newestPageBytes: undefined };
    return new SessionHistory(this.space, sessionId, emptyHead(this.pageSize), window, 0);
  }

  /** The head and the pruned mark (0 when nothing was pruned), in one grouped read. */
  private async readHeadAndMark(sessionId: string): Promise<[HistoryHead | undefined, number]> {
    const [head, mark] = await getAll(this.space, [historyHeadKey(sessionId), historyPrunedKey(sessionId)]);
    return [head === undefined ? undefined : parseHead(sessionId, head), parseMark(sessionId, mark)];
  }
}

/**
 * Pages `indexes` of the history with `head`, in one grouped read, each as the head counts it;
 * none for a missing page below the newest (another open pruned it). The newest page missing is
 * a StoredDataError: the head, written after it, says it is there, and no open prunes it.
 */
async function readPages(
  space: KeyValueSpace,
  sessionId: string,
  head: HistoryHead,
  indexes: readonly number[],
): Promise<Array<WindowPage | undefined>> {
  const raws = await getAll(
    space,
    indexes.map((index) => historyPageKey(sessionId, index)),
  );
  return indexes.map((index, i) => {
    const raw = raws[i];
    if (raw === undefined && index < head.pages - 1) return undefined;
    return storedPage(sessionId, index, raw, Math.min(head.pageSize, head.count - index * head.pageSize));
  });
}

/**
 * One session's history held open by its only writer (a live session, under its session lock):
 * the messages of its window and the head are kept in memory, so an append writes the open page
 * and the head in one `setMany` and reads nothing. Appends are applied in call order; each
 * resolves once durable, and only then joins `messages`.
 */
export class SessionHistory {
  /** Every durable message of the window, oldest first: deep-frozen, replaced (never changed) by each append. */
  private durable: readonly ConversationMessage[];
  private writes: Promise<void> = Promise.resolve();
  /** How many messages of the whole history come before `messages` (not read). */
  readonly start: number;
  private readonly prunable: number;
  /** The open page as the next append extends it: its messages' JSON texts and their bytes as a page. */
  private openPage: OpenPage;

  /** @internal built by HistoryLog.open / openNew; `pruned`: the stored pruned mark */
  constructor(
    private readonly space: KeyValueSpace,
    readonly sessionId: string,
    private head: HistoryHead,
    window: HistoryWindow,
    private pruned: number,
  ) {
    this.durable = deepFreeze(window.messages);
    this.start = window.start;
    this.prunable = window.prunable;
    const filled = head.count % head.pageSize;
    this.openPage = {
      texts: this.durable.slice(this.durable.length - filled).map((message) => JSON.stringify(message)),
      bytes: filled === 0 ? EMPTY_PAGE_BYTES : (window.newestPageBytes ?? EMPTY_PAGE_BYTES),
    };
  }

  /**
   * Every durable message since `start`, oldest first: a deep-frozen list (request snapshots
   * share it rather than copying it), the same one until the next append.
   */
  get messages(): readonly ConversationMessage[] {
    return this.durable;
  }

  /** How many messages the whole history holds: `start` and the window's. */
  get count(): number {
    return this.start + this.durable.length;
  }

  /**
   * The messages of the history's first page — where its opening is — or none once that page is
   * pruned (or the history is empty). Reads that one page, with the head and the pruned mark the
   * open read (a prune by another process since then makes the page missing: none either).
   */
  async firstPage(): Promise<readonly ConversationMessage[]> {
    if (this.head.pages === 0 || this.pruned > 0) return [];
    return deepFreeze((await readPages(this.space, this.sessionId, this.head, [0]))[0]?.messages ?? []);
  }

  /**
   * Delete the pages before the window that no open reads again, then record them as pruned
   * (history-window.ts says why that is safe while another process appends or opens); resolves
   * to how many pages were deleted. A failure leaves the mark as it was: the next prune deletes
   * them again.
   */
  async prune(): Promise<number> {
    const from = this.pruned;
    const to = this.prunable;
    if (to <= from) return 0;
    await Promise.all(
      Array.from({ length: to - from }, (_, i) =>
        this.space.delete(historyPageKey(this.sessionId, from + i)),
      ),
    );
    await this.raiseMark(to);
    this.pruned = to;
    return to - from;
  }

  /**
   * Set the stored pruned mark to `to` unless it is there or higher already: written only over
   * the mark this history knows (the open's, or none), else over the one read then, until it is
   * written or found as high — so an open whose head was older, pruning less, never moves it back
   * below pages another open deleted, in any process. After MAX_MARK_ATTEMPTS writes lost to other
   * processes' it fails, the mark left as they wrote it (the next prune tries again).
   */
  private async raiseMark(to: number): Promise<void> {
    const mark = toVersioned(HISTORY_PRUNED_KIND, { pages: to });
    const known = this.pruned === 0 ? undefined : toVersioned(HISTORY_PRUNED_KIND, { pages: this.pruned });
    const result = await updateByCompareAndSet(
      this.space,
      historyPrunedKey(this.sessionId),
      (stored) => (parseMark(this.sessionId, stored) >= to ? undefined : mark),
      { attempts: MAX_MARK_ATTEMPTS, believed: { value: known } },
    );
    if (result.outcome === "gave-up")
      throw new Error(
        `the pruned mark of session ${this.sessionId}'s history was changed by other processes ${result.attempts} times while this one raised it to ${to} pages; left as they wrote it`,
      );
  }

  /** Validate, freeze and persist messages; resolves once they are durable (throws, writing nothing, when one is invalid). */
  append(...messages: ConversationMessage[]): Promise<void> {
    let valid: SizedMessage[];
    try {
      valid = validated(this.sessionId, messages).map((message) => {
        const text = JSON.stringify(message);
        return { message: deepFreeze(message), text, bytes: Buffer.byteLength(text) };
      });
    } catch (error) {
      return Promise.reject(error);
    }
    const write = this.writes.then(() => (valid.length === 0 ? undefined : this.persist(valid)));
    this.writes = write.catch(() => undefined);
    return write;
  }

  /** Write `valid` after the durable messages; they join `messages` once the write is durable. */
  private persist(valid: readonly SizedMessage[]): Promise<void> {
    const { entries, head, openPage } = appendWrites(this.sessionId, this.head, this.openPage, valid);
    return setAll(this.space, entries).then(() => {
      this.head = head;
      this.openPage = openPage;
      this.durable = frozenConcat(
        this.durable,
        valid.map(({ message }) => message),
      );
    });
  }
}

function emptyHead(pageSize: number): HistoryHead {
  return { count: 0, pageSize, pages: 0 };
}

/** Check every message; the messages themselves (not zod's copies) are what gets stored. */
function validated(sessionId: string, messages: readonly ConversationMessage[]): ConversationMessage[] {
  return messages.map((message, index) => {
    const parsed = conversationMessageSchema.safeParse(message);
    if (!parsed.success) {
      throw new Error(
        `history of session "${sessionId}": message ${index} is invalid: ${describeIssues(parsed.error)}`,
      );
    }
    return message;
  });
}

/** A message to append, its JSON text and that text's bytes. */
interface SizedMessage {
  readonly message: ConversationMessage;
  readonly text: string;
  readonly bytes: number;
}

/**
 * The open page (the newest, while not full; else the next, empty): its messages' JSON texts,
 * written again with each append, and their bytes as a page.
 */
interface OpenPage {
  readonly texts: readonly string[];
  readonly bytes: number;
}

/**
 * The writes that append `messages` to a history whose open page is `open`: each touched page
 * with its bytes, then the new head last (the commit point), and the open page after them.
 */
function appendWrites(
  sessionId: string,
  head: HistoryHead,
  open: OpenPage,
  messages: readonly SizedMessage[],
): { entries: SpaceEntry[]; head: HistoryHead; openPage: OpenPage } {
  const { pageSize } = head;
  const entries: SpaceEntry[] = [];
  let index = Math.floor(head.count / pageSize);
  let texts = [...open.texts];
  let bytes = open.bytes;
  for (const message of messages) {
    bytes = grown(bytes, texts.length, message.bytes);
    texts.push(message.text);
    if (texts.length === pageSize) {
      entries.push(pageEntry(sessionId, index, texts, bytes));
      index += 1;
      texts = [];
      bytes = EMPTY_PAGE_BYTES;
    }
  }
  if (texts.length > 0) entries.push(pageEntry(sessionId, index, texts, bytes));
  const count = head.count + messages.length;
  const next: HistoryHead = { count, pageSize, pages: Math.ceil(count / pageSize) };
  entries.push({ key: historyHeadKey(sessionId), value: toVersioned(HISTORY_HEAD_KIND, next) });
  return { entries, head: next, openPage: { texts, bytes } };
}

function checkSessionId(sessionId: string): void {
  if (
    typeof sessionId !== "string" ||
    sessionId.length === 0 ||
    sessionId.length > MAX_HISTORY_SESSION_ID_LENGTH
  ) {
    throw new Error(`history session id must be a string of 1–${MAX_HISTORY_SESSION_ID_LENGTH} characters`);
  }
}
