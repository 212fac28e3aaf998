/**
 * What a ChannelBuffer knows of each channel's stored buffer: its head, the entries of its last
 * two pages and its recent message ids — how that state is loaded from the store, when a copy
 * this process holds may be used again instead, and the state a committed write leaves. Alone, the
 * copy is the buffer (nobody else writes it); shared, it is used again only while the head stored
 * now is the one it was built from, so an unchanged head costs a read of the head only. A listed
 * page found gone is told expired — or replaced by another process, and the attempt starts again
 * — before any state holding it is kept. Kept apart from ChannelBuffer, which appends, reads and
 * drops through this state, because loading and reusing it is its own set of rules: which pages a
 * read already holds, and what each kind of head change makes stale.
 */
import { getAll, type KeyValueSpace } from "../store/store.js";
import { fromVersioned } from "../store/versioned.js";
import type { BufferEntry } from "./buffer-entry.js";
import type { BatchStart, PlacedBatch } from "./channel-buffer-append-batch.js";
import { PageGone } from "./channel-buffer-shared.js";
import {
  BUFFER_HEAD_KIND,
  BUFFER_PAGE_KIND,
  type BufferHead,
  bufferHeadKey,
  bufferPageKey,
  headSchema,
  type PageInfo,
  pageSchema,
} from "./channel-buffer-store-shapes.js";

/** How many recent message ids per channel are remembered for duplicate detection. */
const RECENT_IDS = 256;

/** A channel's buffer as this process knows it: what a write starts from and a read reads first. */
interface ChannelState extends BatchStart {
  /** The head as stored, handed back to the store to write over it only if unchanged. */
  readonly stored: unknown;
  /** Shared only: `stored` as JSON, made once, compared with the head stored now to reuse this state. */
  readonly storedJson?: string;
  /** The head's page before the last and its entries (undefined: expired), when known: a read need not read it. */
  readonly previous?: PageRead;
}

/** A page and its entries as read (undefined: it expired). */
interface PageRead {
  readonly page: PageInfo;
  readonly entries: readonly BufferEntry[] | undefined;
}

/** A channel's state as loaded, with the pages it lists that were found gone, not yet told expired or replaced. */
interface Loaded {
  readonly state: ChannelState;
  readonly gone: readonly PageInfo[];
}

/** Each channel's state, loaded from the store and kept (see the module comment). */
export class ChannelStates {
  private readonly states = new Map<string, ChannelState | null>();

  /** `shared`: other processes write the same buffers, so a kept state is checked against the head stored now. */
  constructor(
    private readonly space: KeyValueSpace,
    private readonly shared: boolean,
  ) {}

  /** Forget what is known of the channel: the next load reads it as stored now. */
  forget(channelKey: string): void {
    this.states.delete(channelKey);
  }

  /** The channel's buffer was dropped: nothing is buffered for it (shared, the next load checks). */
  dropped(channelKey: string): void {
    this.states.set(channelKey, null);
  }

  /**
   * Keep the state a write committed: `placed` (the batch placed over `start`, the state it was
   * read from) with `stored`, the head record written. The page before the last is known when
   * the write wrote it or `start` held it, so a read after the write need not read it.
   */
  committed(channelKey: string, start: ChannelState | null, placed: PlacedBatch, stored: unknown): void {
    const previous = previousAfter(placed.head, placed.written, start);
    this.states.set(channelKey, {
      head: placed.head,
      stored,
      ...(this.shared ? { storedJson: JSON.stringify(stored) } : {}),
      tail: placed.tail,
      recentIds: placed.recentIds.slice(-RECENT_IDS),
      ...(previous ? { previous } : {}),
    });
  }

  /** The channel's head and last page (null: nothing buffered), its gone pages told expired, kept. */
  async state(channelKey: string): Promise<ChannelState | null> {
    const loaded = await this.load(channelKey);
    if (!loaded) return null;
    await this.keep(channelKey, loaded);
    return loaded.state;
  }

  /**
   * One read of the channel's buffer (undefined: nothing buffered): `read` is given the head, and
   * the entries of each page it asks for from the state when it holds the page, else read from the
   * store once (undefined: expired). The state is then kept, once every listed page found gone,
   * with the head or by `read`, is told expired; throws PageGone (the attempt starts again from the
   * head stored now) when another process replaced one.
   */
  async read<T>(
    channelKey: string,
    read: (
      head: BufferHead,
      loadPage: (page: PageInfo) => Promise<readonly BufferEntry[] | undefined>,
    ) => Promise<T>,
  ): Promise<T | undefined> {
    const loaded = await this.load(channelKey);
    if (!loaded) return undefined;
    const { state } = loaded;
    const gone = [...loaded.gone];
    const result = await read(state.head, (page) => this.pageFor(channelKey, state, page, gone));
    await this.keep(channelKey, { state, gone });
    return result;
  }

  /**
   * Cache `loaded.state` once every page in `loaded.gone` is told expired; throws PageGone (the
   * attempt starts again from the head stored now) when another process replaced one.
   */
  private async keep(channelKey: string, loaded: Loaded): Promise<void> {
    if (!(await this.allExpired(channelKey, loaded.gone))) throw new PageGone(`${channelKey}, a listed page`);
    this.states.set(channelKey, loaded.state);
  }

  /**
   * The channel's head, last page and the page before it (null: nothing buffered): this process's
   * copy when it is the only writer or (shared) while the head stored now is the one it was built
   * from, else as stored now, with the last two pages read in one round trip. Shared, listed pages
   * found gone are returned with it, read as expired: the state is cached only once `keep` has told
   * them so.
   */
  private async load(channelKey: string): Promise<Loaded | null> {
    const cached = this.states.get(channelKey);
    if (cached !== undefined && !this.shared) return cached && { state: cached, gone: [] };
    const raw = await this.space.get(bufferHeadKey(channelKey));
    if (raw === undefined) {
      this.states.set(channelKey, null);
      return null;
    }
    const storedJson = this.shared ? JSON.stringify(raw) : undefined;
    if (cached && storedJson !== undefined && cached.storedJson === storedJson)
      return { state: cached, gone: [] };
    const head = parseHead(channelKey, raw);
    const last = head.pages.at(-1);
    const previous = head.pages.at(-2);
    const listed = [last, previous].filter((page) => page !== undefined);
    const [rawLast, rawPrevious] = await getAll(
      this.space,
      listed.map(({ index, rev }) => bufferPageKey(channelKey, index, rev)),
    );
    const gone: PageInfo[] = [];
    const tail = last ? this.pageEntries(channelKey, head, last, rawLast, gone) : [];
    const before = previous ? this.pageEntries(channelKey, head, previous, rawPrevious, gone) : [];
    const state: ChannelState = {
      head,
      stored: raw,
      ...(storedJson !== undefined ? { storedJson } : {}),
      tail,
      recentIds: [...(before ?? []), ...(tail ?? [])].map((e) => e.id).slice(-RECENT_IDS),
      ...(previous ? { previous: { page: previous, entries: before } } : {}),
    };
    return { state, gone };
  }

  /**
   * The entries of `page`, listed by `state`'s head, for a read: from the state when it holds the
   * page, else read from the store (undefined: expired; shared, a page not stored is added to
   * `gone` for `keep` to tell expired or replaced).
   */
  private async pageFor(
    channelKey: string,
    state: ChannelState,
    page: PageInfo,
    gone: PageInfo[],
  ): Promise<readonly BufferEntry[] | undefined> {
    if (page === state.head.pages.at(-1)) return state.tail;
    if (page === state.previous?.page) return state.previous.entries;
    const raw = await this.space.get(bufferPageKey(channelKey, page.index, page.rev));
    return this.pageEntries(channelKey, state.head, page, raw, gone);
  }

  /**
   * A page's entries up to the head's last seq (a crash between page and head writes may leave
   * more), from its stored value `raw`; undefined when it is not stored: the page expired, or,
   * shared, another process replaced it — the page is then added to `gone` for `allExpired` to tell.
   */
  private pageEntries(
    channelKey: string,
    head: BufferHead,
    page: PageInfo,
    raw: unknown,
    gone: PageInfo[],
  ): BufferEntry[] | undefined {
    const { index } = page;
    if (raw === undefined) {
      if (this.shared) gone.push(page);
      return undefined;
    }
    const { entries } = fromVersioned(raw, {
      kind: BUFFER_PAGE_KIND,
      schema: pageSchema,
      where: `${channelKey}, page ${index}`,
    });
    return entries.filter((e) => e.seq <= head.lastSeq);
  }

  /**
   * Whether the listed pages found `gone` all expired (true when there are none): read after them,
   * the head stored now still lists each one's key. A write that replaces a page commits a head
   * listing a new page key before deleting the old one, a drop deletes the head first, and a key
   * is never listed again once dropped — so writes that touched other pages meanwhile do not
   * matter; when one is no longer listed another process replaced it, and the attempt starts again
   * from the head stored now. One read of the head however many pages were gone.
   */
  private async allExpired(channelKey: string, gone: readonly PageInfo[]): Promise<boolean> {
    if (gone.length === 0) return true;
    const raw = await this.space.get(bufferHeadKey(channelKey));
    if (raw === undefined) return false;
    const listed = parseHead(channelKey, raw).pages;
    return gone.every((page) => listed.some((p) => p.index === page.index && p.rev === page.rev));
  }
}

/**
 * The page before the last of `head`, the head a write committed over `start`, with its entries
 * when the write knows them: it wrote the page, or the page is `start`'s last or before-last one
 * as it was (same index and write); else undefined, and a read reads it.
 */
function previousAfter(
  head: BufferHead,
  written: readonly PageRead[],
  start: ChannelState | null,
): PageRead | undefined {
  const page = head.pages.at(-2);
  if (page === undefined) return undefined;
  const ours = written.find((w) => w.page === page);
  if (ours) return { page, entries: ours.entries };
  const same = (p: PageInfo | undefined) => p?.index === page.index && p.rev === page.rev;
  if (start && same(start.head.pages.at(-1))) return { page, entries: start.tail };
  if (start?.previous && same(start.previous.page)) return { page, entries: start.previous.entries };
  return undefined;
}

/** A stored head, checked (throws for one that cannot be read). */
function parseHead(channelKey: string, raw: unknown): BufferHead {
  return fromVersioned(raw, { kind: BUFFER_HEAD_KIND, schema: headSchema, where: channelKey });
}
