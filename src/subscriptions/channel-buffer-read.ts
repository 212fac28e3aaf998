/**
 * What a ChannelBuffer read returns and how it is worked out from a head and its pages: which
 * entries match, how many more there were, and how many were forgotten unread (count or age cap)
 * so a reader can be told of the gap once. Kept apart from ChannelBuffer, which only supplies the
 * head and loads the pages (from its cache or the store), so these read rules live in one place.
 */
import { type BufferEntry, type BufferPosition, isAfter, positionOf } from "./buffer-entry.js";
import { type BufferHead, type PageInfo, pageOf } from "./channel-buffer-store-shapes.js";

/**
 * What a read returns: entries oldest first, how many more matched beyond `limit`, and how many
 * after `after` (same incarnation) and before the last entry returned (or the end, when all were
 * returned) were forgotten before they were read — over the count cap or the age cap, counted
 * across the channel whatever the thread (an expired page's entries cannot be told apart by
 * thread, so none are, and so the count of a page past the age cap is the same before and after
 * its TTL ends); `droppedThrough` is the newest position they cover, so a reader whose cursor
 * moves there is not told of them again.
 */
export interface BufferRead {
  readonly epoch: string;
  readonly entries: readonly BufferEntry[];
  readonly remaining: number;
  readonly dropped: number;
  readonly droppedThrough: BufferPosition | undefined;
}

export interface ReadOptions {
  /** Only entries after this position. */
  readonly after?: BufferPosition;
  /** Only entries sent at or after this ISO time. */
  readonly since?: string;
  /** Only entries in this topic / thread. */
  readonly thread?: string;
  readonly limit: number;
}

/**
 * The entries of `head` matching `options`, oldest first, at most `limit` of them; entries sent
 * before `cutoff` (epoch ms) are past the age cap. `loadPage` gives the entries of a page it lists,
 * or undefined when the page expired: its entries are then counted as forgotten, as entries below
 * the floor and past the age cap are.
 */
export async function readEntries(
  head: BufferHead,
  options: ReadOptions,
  cutoff: number,
  loadPage: (page: PageInfo) => Promise<readonly BufferEntry[] | undefined>,
): Promise<BufferRead> {
  const sinceMs = options.since === undefined ? undefined : Date.parse(options.since);
  const { after } = options;
  const sameEpoch = after !== undefined && after.epoch === head.epoch;
  const afterSeq = sameEpoch ? after.seq : head.floorSeq - 1;
  const firstPage = pageOf(Math.max(afterSeq + 1, head.floorSeq), head.pageSize);
  const entries: BufferEntry[] = [];
  let remaining = 0;
  // A position below the floor: the entries between it and the floor were forgotten unread
  // (the time of the last of them is not known: the position read keeps its own).
  let dropped = sameEpoch ? Math.max(0, head.floorSeq - 1 - afterSeq) : 0;
  let droppedThrough: BufferPosition | undefined =
    after !== undefined && dropped > 0
      ? { epoch: head.epoch, seq: head.floorSeq - 1, at: after.at }
      : undefined;
  for (const page of head.pages) {
    if (page.index < firstPage) continue;
    const loaded = await loadPage(page);
    if (loaded === undefined) {
      const first = Math.max(page.index * head.pageSize + 1, head.floorSeq, afterSeq + 1);
      const last = Math.min((page.index + 1) * head.pageSize, head.lastSeq);
      if (sameEpoch && entries.length < options.limit && last >= first) {
        dropped += last - first + 1;
        droppedThrough = { epoch: head.epoch, seq: last, at: page.maxAt };
      }
      continue;
    }
    for (const entry of loaded) {
      if (entry.seq < head.floorSeq || entry.seq > head.lastSeq) continue;
      const at = Date.parse(entry.at);
      if (!isAfter(entry, head.epoch, after)) continue;
      if (at < cutoff) {
        // Counted up to the last entry returned: those beyond are told of when read up to.
        if (sameEpoch && entries.length < options.limit) {
          dropped += 1;
          droppedThrough = positionOf(entry, head.epoch);
        }
        continue;
      }
      if (options.thread !== undefined && entry.thread !== options.thread) continue;
      if (sinceMs !== undefined && at < sinceMs) continue;
      if (entries.length < options.limit) entries.push(entry);
      else remaining += 1;
    }
  }
  return { epoch: head.epoch, entries, remaining, dropped, droppedThrough };
}
