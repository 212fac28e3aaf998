/**
 * The stored shapes of a session's paged history (history-log.ts): the head, page and pruned-mark
 * records with their kinds, schemas and keys, how each is read back and validated, and how a
 * page's JSON bytes are counted as messages join it. Kept apart from HistoryLog so the log's file
 * is about reading and appending, and this one about what is in the store.
 */
import { z } from "zod";
import type { WindowPage } from "./history-window.js";
import { conversationMessageSchema } from "./message-schema.js";
import type { SpaceEntry } from "./store.js";
import { JsonText } from "./json-text.js";
import { fromVersioned, StoredDataError, versionedText } from "./versioned.js";

export const HISTORY_HEAD_KIND = "history-head";
export const HISTORY_PAGE_KIND = "history-page";
export const HISTORY_PRUNED_KIND = "history-pruned";

/** The head record: how many messages, in pages of what size. */
export interface HistoryHead {
  readonly count: number;
  readonly pageSize: number;
  readonly pages: number;
}

/** Validates a stored head's `data`. */
const historyHeadSchema: z.ZodType<HistoryHead> = z
  .object({
    count: z.number().int().nonnegative(),
    pageSize: z.number().int().positive(),
    pages: z.number().int().nonnegative(),
  })
  .refine((head) => head.pages === Math.ceil(head.count / head.pageSize), {
    message: "pages does not match count and pageSize",
  });

/**
 * Validates a stored page's `data`: its messages and the bytes of their JSON (pages older builds
 * wrote have none: they are measured when read).
 */
const historyPageSchema = z.object({
  messages: z.array(conversationMessageSchema),
  bytes: z.number().int().nonnegative().optional(),
});

/** Validates a stored pruned mark's `data`: the pages before `pages` are deleted. */
const historyPrunedSchema = z.object({ pages: z.number().int().nonnegative() });

/** Storage keys: heads and pages live under distinct prefixes so no session id can collide with a page. */
export function historyHeadKey(sessionId: string): string {
  return `head:${sessionId}`;
}

/** Key of page `index` (0-based) of a session's history. */
export function historyPageKey(sessionId: string, index: number): string {
  return `page:${sessionId}:${index}`;
}

/** Key of the session's pruned mark. */
export function historyPrunedKey(sessionId: string): string {
  return `pruned:${sessionId}`;
}

export function parseHead(sessionId: string, raw: unknown): HistoryHead {
  return fromVersioned(raw, {
    kind: HISTORY_HEAD_KIND,
    schema: historyHeadSchema,
    where: `session "${sessionId}"`,
  });
}

export function parseMark(sessionId: string, raw: unknown): number {
  if (raw === undefined) return 0;
  const where = `session "${sessionId}"`;
  return fromVersioned(raw, { kind: HISTORY_PRUNED_KIND, schema: historyPrunedSchema, where }).pages;
}

/**
 * The first `expected` messages of a stored page, and their bytes. The head's count is
 * authoritative: a page may hold more when a crash hit between writing it and writing the head;
 * those are not part of history (and the stored bytes, which count them, are measured again).
 */
export function storedPage(sessionId: string, index: number, raw: unknown, expected: number): WindowPage {
  const where = `session "${sessionId}", page ${index}`;
  if (raw === undefined) throw new StoredDataError(`stored ${HISTORY_PAGE_KIND} (${where}) is missing`);
  const page = fromVersioned(raw, { kind: HISTORY_PAGE_KIND, schema: historyPageSchema, where });
  if (page.messages.length < expected) {
    throw new StoredDataError(
      `stored ${HISTORY_PAGE_KIND} (${where}) is truncated: ${page.messages.length} of ${expected} messages`,
    );
  }
  if (page.bytes !== undefined && page.messages.length === expected) {
    return { messages: page.messages, bytes: page.bytes };
  }
  const messages = page.messages.slice(0, expected);
  return { messages, bytes: jsonBytes(messages) };
}

/** The bytes of `value`'s JSON: how a page and a message are measured. */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value));
}

/** The bytes of a page with no messages: `[]`. */
export const EMPTY_PAGE_BYTES = 2;

/**
 * The bytes of a page of `length` messages and `bytes` once a message of `messageBytes` joins it:
 * `[a]` and `b` make `[a,b]`, one comma more.
 */
export function grown(bytes: number, length: number, messageBytes: number): number {
  return bytes + messageBytes + (length === 0 ? 0 : 1);
}

/**
 * The write of page `index` holding the messages whose JSON texts are `texts`, `bytes` in all as
 * a page (see grown): the page record's JSON made from them, so no message is serialised again.
 */
export function pageEntry(
  sessionId: string,
  index: number,
  texts: readonly string[],
  bytes: number,
): SpaceEntry {
  const data = `{"messages":[${texts.join(",")}],"bytes":${bytes}}`;
  return {
    key: historyPageKey(sessionId, index),
    value: new JsonText(versionedText(HISTORY_PAGE_KIND, data)),
  };
}
