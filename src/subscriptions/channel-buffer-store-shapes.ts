/**
 * What a ChannelBuffer keeps in the store's "buffers" space: the head and page records (their
 * kinds and schemas, checked on every read), the keys they live under, and the small pure helpers
 * over them, and how long a page is kept. Kept apart from ChannelBuffer so the stored layout is
 * defined in one place, shared by the single-process paths and the shared-mode compare-and-set
 * paths (channel-buffer-shared.ts).
 */
import { z } from "zod";
import type { KeyValueSpace } from "../store/store.js";
import { fromVersioned } from "../store/versioned.js";
import { bufferEntrySchema } from "./buffer-entry.js";

export const BUFFER_HEAD_KIND = "channel-buffer-head";
export const BUFFER_PAGE_KIND = "channel-buffer-page";

export interface PageInfo {
  readonly index: number;
  /** Latest `at` of the page's entries: the page is stale once this is older than the age cap. */
  readonly maxAt: string;
  /** Which write of the page this is, when several processes write (each write a key of its own). */
  readonly rev?: string;
}

/** Which stored page: its index and write. */
export type PageKey = Pick<PageInfo, "index" | "rev">;

export interface BufferHead {
  readonly epoch: string;
  readonly pageSize: number;
  readonly lastSeq: number;
  /** Entries below this seq are forgotten (count cap or age cap). */
  readonly floorSeq: number;
  readonly pages: readonly PageInfo[];
}

export const headSchema: z.ZodType<BufferHead> = z.object({
  epoch: z.string().min(1).max(64),
  pageSize: z.number().int().positive(),
  lastSeq: z.number().int().nonnegative(),
  floorSeq: z.number().int().positive(),
  pages: z.array(
    z.object({
      index: z.number().int().nonnegative(),
      maxAt: z.iso.datetime({ offset: true }),
      rev: z
        .string()
        .regex(/^[0-9a-f]{1,32}$/)
        .optional(),
    }),
  ),
});
export const pageSchema = z.object({ entries: z.array(bufferEntrySchema) });

/** Store key of a channel buffer's head (heads and pages use distinct prefixes). */
export const bufferHeadKey = (channelKey: string) => `head:${channelKey}`;
/** Store key of page `index` of a channel's buffer (of its write `rev`, when several processes write). */
export const bufferPageKey = (channelKey: string, index: number, rev?: string) =>
  rev === undefined ? `page:${channelKey}:${index}` : `page:${channelKey}:${index}:${rev}`;

/**
 * How much longer than its entries are shown a page is kept: a process whose clock runs behind the
 * store's by less than this still finds every page it may show.
 */
const PAGE_LIFETIME_MARGIN_MS = 86_400_000;

/**
 * How long a page written `now` is kept (its TTL): until every entry on it is past the writer's
 * age cap (its newest `at`, or `now` when that is later, plus `maxAgeMs`), and a margin more. So a
 * page no head lists — its process crashed between page and head writes, or its head cannot be
 * read — is gone by then. A page a head lists may be gone while a reader would still show it (its
 * age cap was raised since): it then reads as forgotten entries (ChannelBuffer's pageEntries).
 * Heads have no TTL: a head is kept until a drop deletes it, and lists pages that may expire.
 */
export function pageLifetimeMs(maxAt: string, now: number, maxAgeMs: number): number {
  const lifetime = Math.max(Date.parse(maxAt) - now, 0) + maxAgeMs + PAGE_LIFETIME_MARGIN_MS;
  return Math.min(lifetime, Number.MAX_SAFE_INTEGER);
}

/** Index of the page entry `seq` is on. */
export function pageOf(seq: number, pageSize: number): number {
  return Math.floor((seq - 1) / pageSize);
}

/** The pages a stored head lists; none for a corrupt head (its pages are then unknown and stay). */
export function listedPages(channelKey: string, raw: unknown): readonly PageInfo[] {
  try {
    return fromVersioned(raw, { kind: BUFFER_HEAD_KIND, schema: headSchema, where: channelKey }).pages;
  } catch {
    return [];
  }
}

/** Delete the given pages of a channel's buffer. */
export async function deletePages(
  space: KeyValueSpace,
  channelKey: string,
  pages: readonly PageKey[],
): Promise<void> {
  await Promise.all(pages.map((p) => space.delete(bufferPageKey(channelKey, p.index, p.rev))));
}
