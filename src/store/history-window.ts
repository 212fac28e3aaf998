/**
 * History window: how much of a session's paged history opening it reads, and which pages no
 * open will read again. A session's stored history grows with every turn, but what a model is
 * sent is bounded by its context (compaction summarises the rest), so opening reads only the
 * newest pages: back to the page of the oldest message the caller still needs (the compaction
 * summary's anchor) and never more than a budget of messages and bytes, generous enough for any
 * model's context window. Pages are read newest first, in batches (one round trip each).
 * The pages before the window can be pruned: the message budget's first page depends only on
 * how many messages the history holds, and the byte budget's only on pages that never change
 * once full, so both only move forward as the history grows, and a later open — by this process
 * or another — never reads below them (the anchor hint may: it only narrows a read, and pruning
 * never follows it). An open that finds a page missing below the newest takes it as pruned by
 * another open (one whose head was newer, or whose mark it read before that prune wrote it): the
 * window starts after it, and every page up to it may be pruned (that open found them so).
 * A page's bytes are the size its writer stored with it (or, on a page an older build wrote,
 * measured once read), so an open serialises nothing to count them.
 */
import type { ConversationMessage } from "../core/messages.js";

/** At most how much of a session's history opening it reads, counted back from its newest message. */
export interface HistoryWindowBudget {
  readonly messages: number;
  readonly bytes: number;
}

/**
 * The budget every session is opened with: 4,000 messages and 8 MiB of their JSON, about two
 * million tokens of text — more than any model's context window, so what is left out could not
 * have been sent anyway (the model is told some earlier turns were dropped: engine/compaction.ts).
 * A constant, not a setting: every process on a store must keep at least the pages the others
 * may read (a store's pruned mark guards an open from reading below it all the same).
 */
export const HISTORY_WINDOW: HistoryWindowBudget = { messages: 4_000, bytes: 8 * 1024 * 1024 };

/** Pages the first batch of an open reads: a session of up to this many pages opens in one round trip. */
const FIRST_BATCH_PAGES = 16;

/** The shape of a history the window is taken of. */
export interface WindowedHead {
  readonly count: number;
  readonly pageSize: number;
  readonly pages: number;
}

/** One page as read: its messages, as the head counts them, and the bytes of their JSON. */
export interface WindowPage {
  readonly messages: ConversationMessage[];
  readonly bytes: number;
}

/** What an open read: the newest pages' messages, where they start, and how far pruning may go. */
export interface HistoryWindow {
  /** Index of the window's first message in the whole history (a multiple of the page size). */
  readonly start: number;
  readonly messages: ConversationMessage[];
  /** Pages before this one are never read again by any open: they may be deleted. */
  readonly prunable: number;
  /** The bytes of the newest page's messages (what the next append extends); none without pages. */
  readonly newestPageBytes: number | undefined;
}

/**
 * Read the window of a history with `head`: pages newest first through `readPages` (indexes
 * ascending in each call, each page's messages as the head counts them and their bytes; none
 * for a page that is missing, which the newest never is: readPages throws then), never below
 * page `lowest` (what is stored: the pruned mark), nor below the page of message `from` when
 * given, nor at or below a missing page (pruned by another open since the mark was read).
 */
export async function readWindow(
  head: WindowedHead,
  options: {
    readonly budget: HistoryWindowBudget;
    readonly lowest: number;
    readonly from?: number | undefined;
    readonly readPages: (indexes: readonly number[]) => Promise<Array<WindowPage | undefined>>;
  },
): Promise<HistoryWindow> {
  const { budget, readPages } = options;
  const last = head.pages - 1;
  const floor = Math.max(
    options.lowest,
    Math.floor(Math.max(0, head.count - budget.messages) / head.pageSize),
  );
  const from = options.from === undefined ? 0 : Math.floor(options.from / head.pageSize);
  const stop = Math.min(last, Math.max(floor, from));
  /** The pages read, newest first. */
  const kept: WindowPage[] = [];
  let bytes = 0;
  let full = false;
  /** Whether a page read was missing: the window starts after it. */
  let gone = false;
  let next = last;
  while (next >= stop && !full && !gone) {
    // Later batches: as many pages as the bytes left would hold, at the pages' average so far.
    const size =
      kept.length === 0
        ? FIRST_BATCH_PAGES
        : Math.max(1, Math.ceil((budget.bytes - bytes) / (bytes / kept.length)));
    const first = Math.max(stop, next - size + 1);
    const pages = await readPages(Array.from({ length: next - first + 1 }, (_, i) => first + i));
    for (let i = pages.length - 1; i >= 0; i--) {
      const page = pages[i];
      if (page === undefined) {
        gone = true;
        break;
      }
      // The newest page is always read: it holds the end of the history, which appends extend.
      if (kept.length > 0 && bytes + page.bytes > budget.bytes) {
        full = true;
        break;
      }
      kept.push(page);
      bytes += page.bytes;
    }
    next = first - 1;
  }
  const startPage = last - kept.length + 1;
  return {
    start: startPage * head.pageSize,
    messages: kept.toReversed().flatMap((page) => page.messages),
    prunable: full || gone ? startPage : floor,
    newestPageBytes: kept[0]?.bytes,
  };
}
