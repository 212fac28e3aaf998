/**
 * How a batch of appends to one channel becomes the buffer's next head and page contents, before
 * anything is stored: duplicate ids skipped, each new entry given the next seq and placed on its
 * page, the floor raised past a last page that expired, the count and age caps applied, and which
 * pages the write must store and which page versions it then replaces. Kept apart from
 * ChannelBuffer, which reads the channel's state and stores the result (pages, then the head), so
 * this page arithmetic is pure and in one place.
 */
import { randomBytes } from "node:crypto";
import {
  type BufferEntry,
  type BufferEntryInput,
  type BufferPosition,
  capEntryText,
  positionOf,
} from "./buffer-entry.js";
import { type BufferHead, type PageInfo, pageOf } from "./channel-buffer-store-shapes.js";

/** A stored entry and where it sits. */
export interface AppendResult {
  readonly entry: BufferEntry;
  readonly position: BufferPosition;
}

/** What a batch starts from: the channel's head as read, its last page and its recent message ids. */
export interface BatchStart {
  readonly head: BufferHead;
  /** Entries of the last page (its index is `pageOf(head.lastSeq)`); undefined when it expired. */
  readonly tail: readonly BufferEntry[] | undefined;
  readonly recentIds: readonly string[];
}

/** The buffer's settings a batch is placed under. */
export interface BatchLimits {
  readonly maxEntries: number;
  readonly maxAgeMs: number;
  /** Entries per page of a new buffer. */
  readonly pageSize: number;
  readonly maxEntryChars: number;
  /** This write's page version, when several processes write (each write a page key of its own). */
  readonly rev: string | undefined;
}

/** A placed batch: what to store and what the buffer holds once it is stored. */
export interface PlacedBatch {
  /** One per input, in order: where it was stored, or undefined when its id is already in the buffer. */
  readonly results: readonly (AppendResult | undefined)[];
  /** The head to commit, caps applied (unchanged from the start when no entry was new). */
  readonly head: BufferHead;
  /** Entries of the new head's last page. */
  readonly tail: readonly BufferEntry[];
  /** Recent message ids, oldest first, the batch's new ones last. */
  readonly recentIds: readonly string[];
  /** The pages to write before the head: those the batch added entries to that the caps kept (none when no entry was new). */
  readonly written: readonly { readonly page: PageInfo; readonly entries: readonly BufferEntry[] }[];
  /** Page versions the start head lists and the new head no longer does: deleted once it is stored. */
  readonly replaced: readonly PageInfo[];
}

/**
 * Place `inputs` after the buffer `start` (a new buffer when null) at `now` (epoch ms, the time of
 * the write): every entry of the batch is buffered at it, as they are stored together, and the age
 * cap is judged by it.
 */
export function placeBatch(
  start: BatchStart | null,
  inputs: readonly BufferEntryInput[],
  limits: BatchLimits,
  now: number,
): PlacedBatch {
  const { rev } = limits;
  let head: BufferHead = start?.head ?? emptyHead(limits.pageSize);
  // The last page expired: its entries are forgotten (those of any earlier page too, which is
  // rarely still kept), and the next entry may be written over it, so the floor says so.
  if (start && start.tail === undefined) head = { ...head, floorSeq: head.lastSeq + 1 };
  const recent = new Set(start?.recentIds ?? []);
  const recentIds = [...(start?.recentIds ?? [])];
  let tail = [...(start?.tail ?? [])];
  const touched = new Map<number, BufferEntry[]>();
  const results: (AppendResult | undefined)[] = [];
  const bufferedAt = new Date(now).toISOString();
  for (const input of inputs) {
    if (recent.has(input.id)) {
      results.push(undefined);
      continue;
    }
    const entry: BufferEntry = {
      ...capEntryText(input, limits.maxEntryChars),
      seq: head.lastSeq + 1,
      bufferedAt,
    };
    const index = pageOf(entry.seq, head.pageSize);
    const last = head.pages.at(-1);
    if (last?.index !== index) tail = [];
    tail.push(entry);
    touched.set(index, tail);
    const maxAt =
      last?.index === index && Date.parse(last.maxAt) > Date.parse(entry.at) ? last.maxAt : entry.at;
    const pages = last?.index === index ? head.pages.slice(0, -1) : head.pages;
    head = { ...head, lastSeq: entry.seq, pages: [...pages, { index, maxAt, ...(rev ? { rev } : {}) }] };
    recent.add(entry.id);
    recentIds.push(entry.id);
    results.push({ entry, position: positionOf(entry, head.epoch) });
  }
  if (touched.size === 0) return { results, head, tail, recentIds, written: [], replaced: [] };
  const trimmed = trim(head, limits, now);
  const kept = new Map(trimmed.pages.map((p) => [p.index, p]));
  const written = [...touched].flatMap(([index, entries]) => {
    const page = kept.get(index);
    return page ? [{ page, entries }] : [];
  });
  const replaced = (start?.head.pages ?? []).filter((p) => {
    const still = kept.get(p.index);
    return still === undefined || still.rev !== p.rev;
  });
  return { results, head: trimmed, tail, recentIds, written, replaced };
}

/** A new, empty buffer incarnation. */
function emptyHead(pageSize: number): BufferHead {
  return {
    epoch: randomBytes(8).toString("hex"),
    pageSize,
    lastSeq: 0,
    floorSeq: 1,
    pages: [],
  };
}

/** Apply the count and age caps at `now`: raise the floor, drop whole pages below it or gone stale. */
function trim(head: BufferHead, limits: BatchLimits, now: number): BufferHead {
  let floorSeq = Math.max(head.floorSeq, head.lastSeq - limits.maxEntries + 1);
  const cutoff = now - limits.maxAgeMs;
  const pages = [...head.pages];
  while (pages.length > 1) {
    const first = pages[0]!;
    const lastSeqOfPage = (first.index + 1) * head.pageSize;
    if (lastSeqOfPage >= floorSeq && Date.parse(first.maxAt) >= cutoff) break;
    pages.shift();
    floorSeq = Math.max(floorSeq, lastSeqOfPage + 1);
  }
  return { ...head, floorSeq, pages };
}
