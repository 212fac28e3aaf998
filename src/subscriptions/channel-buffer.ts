/**
 * ChannelBuffer: a bounded, paged log of the messages seen in each watched channel, kept in the
 * store's "buffers" space. Like HistoryLog it is a small head plus fixed-size pages, and an
 * append rewrites only the last page and the head (the head is the commit point). Unlike
 * HistoryLog it forgets: entries beyond the count cap or older than the age cap are hidden at
 * once and their pages deleted as soon as a whole page is stale, so the buffer stays bounded.
 *
 * A message deleted or edited on the platform is revised in place (`revise`, buffer-revision.ts):
 * only its page is written again, and a deleted message's text is gone from the store; this
 * process then does not buffer it again (a late or redelivered copy of the message).
 *
 * Appends to one channel made while a write is in flight are committed together in the next
 * write (group commit), so a burst costs one page write, not one per message. Duplicate message
 * ids (Slack's twin `message` / `app_mention` events) are stored once.
 *
 * With several processes on one store (`shared`) each read and write starts from the head as
 * stored, and a write commits only over the head it read (compare-and-set), into page keys of its
 * own: a write that lost to another process's starts again, so neither's messages are lost.
 * A page no head lists is deleted by the write that made it when that write loses or fails, and
 * by a drop, which removes exactly the head it deletes the pages of. One a crash left (after its
 * page write, before its head write) or a drop could not know (its head unreadable) expires:
 * every page is written with a TTL that lasts until all its entries are past the writer's age cap
 * (pageLifetimeMs). Heads do not expire. A page the head lists that is not stored expired, and reads
 * as entries forgotten, unless another process replaced it: shared, that is told by reading the
 * head again once an attempt has read its pages (still listing them: nobody replaced them), not
 * by the reader's age cap, which need not be the one the page was written under (a raised cap
 * would otherwise fail every attempt, or hide entries uncounted); pages listed by heads older
 * than page TTLs are judged the same way.
 * The stored records and keys are in channel-buffer-store-shapes.ts, what this process knows of
 * each channel (its head and last two pages: loaded, kept and used again while the head stays
 * the one read) in channel-buffer-state.ts, the read rules (matching, forgotten-entry counts) in
 * channel-buffer-read.ts, how a batch of appends becomes the next head and pages (seqs, caps,
 * pages to write and replace) in channel-buffer-append-batch.ts, and the shared-mode
 * compare-and-set commit, the compare-and-delete drop (both modes) and the retry loop in
 * channel-buffer-shared.ts.
 */
import { randomBytes } from "node:crypto";
import { describeProblems } from "../core/schema-problems.js";
import { LruCache } from "../core/lru-cache.js";
import { KeyedMutex } from "../store/key-mutex.js";
import type { KeyValueSpace } from "../store/store.js";
import { toVersioned } from "../store/versioned.js";
import {
  type BufferEntry,
  type BufferEntryInput,
  bufferEntryInputSchema,
  DEFAULT_MAX_ENTRY_CHARS,
} from "./buffer-entry.js";
import { type EntryEdit, revisedEntries } from "./buffer-revision.js";
import { type Clock, systemClock } from "../core/clock.js";
import { type AppendResult, placeBatch } from "./channel-buffer-append-batch.js";
import { type BufferRead, type ReadOptions, readEntries } from "./channel-buffer-read.js";
import { commitShared, dropOnce, retrying } from "./channel-buffer-shared.js";
import { ChannelStates } from "./channel-buffer-state.js";
import {
  BUFFER_HEAD_KIND,
  BUFFER_PAGE_KIND,
  type BufferHead,
  bufferHeadKey,
  bufferPageKey,
  deletePages,
  type PageInfo,
  pageLifetimeMs,
} from "./channel-buffer-store-shapes.js";

export interface ChannelBufferOptions {
  /** Count cap per channel. */
  readonly maxEntries: number;
  /** Age cap per channel, in milliseconds. */
  readonly maxAgeMs: number;
  /** Entries per page (default: 50, at most maxEntries). */
  readonly pageSize?: number;
  readonly maxEntryChars?: number;
  /** The time entries are buffered at and aged by, and the timers a shared buffer pauses on between retries. */
  readonly clock?: Clock;
  /**
   * Several processes append to and read the same buffers: each read and write starts from the
   * head as stored, not from this process's copy (which another process may have moved on).
   */
  readonly shared?: boolean;
}

/**
 * What a revision did: the message was not in the buffer, the edit changed nothing, it was
 * deleted, or edited (`entry`, as now stored).
 */
export type Revision =
  | { readonly outcome: "absent" | "unchanged" | "deleted" }
  | { readonly outcome: "edited"; readonly entry: BufferEntry };

/** The page holding a message, as a revision found it, and its entries once revised. */
interface FoundPage {
  readonly head: BufferHead;
  readonly page: PageInfo;
  readonly entries: readonly BufferEntry[];
  readonly revision: Revision;
}

/** How many deleted messages this process remembers so as not to buffer them again. */
const DELETED_IDS = 10_000;

interface PendingAppend {
  readonly input: BufferEntryInput;
  readonly resolve: (result: AppendResult | undefined) => void;
  readonly reject: (error: unknown) => void;
}

/** The per-channel message buffers. One instance per store per process; it keeps each channel's head and last two pages (channel-buffer-state.ts). */
export class ChannelBuffer {
  private readonly mutex = new KeyedMutex();
  /**
   * Messages reported deleted, by channel key and id: a late or redelivered copy of one (Slack
   * does not order events: a paste deleted at once may arrive after its deletion) is not
   * buffered again by this process.
   */
  private readonly deleted = new LruCache<string, true>(DELETED_IDS);
  private readonly states: ChannelStates;
  private readonly queues = new Map<string, PendingAppend[]>();
  private readonly pageSize: number;
  private readonly maxEntryChars: number;
  private readonly clock: Clock;

  /** Throws for caps that are not positive whole numbers. */
  constructor(
    private readonly space: KeyValueSpace,
    private readonly options: ChannelBufferOptions,
  ) {
    for (const [name, value] of [
      ["maxEntries", options.maxEntries],
      ["maxAgeMs", options.maxAgeMs],
    ] as const) {
      if (!Number.isSafeInteger(value) || value < 1)
        throw new Error(`ChannelBuffer ${name} must be a positive whole number, got ${value}`);
    }
    this.pageSize = Math.min(options.pageSize ?? 50, options.maxEntries);
    this.maxEntryChars = options.maxEntryChars ?? DEFAULT_MAX_ENTRY_CHARS;
    this.clock = options.clock ?? systemClock;
    this.states = new ChannelStates(space, options.shared === true);
  }

  /**
   * Append one message. Resolves once it is stored (undefined when the id is already in the
   * buffer, or was reported deleted to this process); rejects, storing nothing, when the message does not pass the entry schema, and when
   * the store write fails — nothing of that write's batch is then kept.
   */
  append(channelKey: string, input: BufferEntryInput): Promise<AppendResult | undefined> {
    // Checked here, not on read: a stored entry its page's schema refuses would fail every read of the page.
    const checked = bufferEntryInputSchema.safeParse(input);
    if (!checked.success)
      return Promise.reject(
        new Error(`channel buffer: message not stored in ${channelKey} (${describeProblems(checked.error)})`),
      );
    return new Promise((resolve, reject) => {
      const queue = this.queues.get(channelKey);
      if (queue) {
        queue.push({ input, resolve, reject });
        return;
      }
      this.queues.set(channelKey, [{ input, resolve, reject }]);
      void this.drain(channelKey);
    });
  }

  /** Entries matching `options`, oldest first, at most `limit` of them. */
  async read(channelKey: string, options: ReadOptions): Promise<BufferRead | undefined> {
    return this.mutex.run(channelKey, () =>
      this.retrying(channelKey, "read", () => this.readOnce(channelKey, options)),
    );
  }

  /**
   * One attempt at a read: each page it needs is read from the store once (none that the state
   * holds or read with the head), and, shared, the head once more only when listed pages were
   * gone, to tell whether they expired (PageGone: another process replaced one, start again).
   */
  private readOnce(channelKey: string, options: ReadOptions): Promise<BufferRead | undefined> {
    return this.states.read(channelKey, (head, loadPage) =>
      readEntries(head, options, this.clock.now() - this.options.maxAgeMs, loadPage),
    );
  }

  /**
   * The platform says message `id` of the channel was deleted (`edit` undefined: it leaves the
   * buffer, its text with it) or edited (it keeps its place and takes the new text). Only the page
   * holding it is written again (shared: as a new page write, committed over the head read, the
   * old page deleted once the head no longer lists it). Rejects when the store write fails.
   */
  async revise(channelKey: string, id: string, edit: EntryEdit | undefined): Promise<Revision> {
    if (edit === undefined) this.deleted.set(deletedKey(channelKey, id), true);
    return this.mutex.run(channelKey, () =>
      this.retrying(channelKey, "revision of a message", () => this.reviseOnce(channelKey, id, edit)),
    );
  }

  /** One attempt at a revision (null: another process moved the head meanwhile, start again). */
  private async reviseOnce(
    channelKey: string,
    id: string,
    edit: EntryEdit | undefined,
  ): Promise<Revision | null> {
    const state = await this.states.state(channelKey);
    if (!state) return { outcome: "absent" };
    const found = await this.states.read(channelKey, (head, loadPage) =>
      this.findMessage(head, loadPage, id, edit),
    );
    if (found === undefined || "outcome" in found) return found ?? { outcome: "absent" };
    if (found.head !== state.head) return null;
    const { page, entries } = found;
    const rev = this.options.shared ? randomBytes(8).toString("hex") : undefined;
    const ours = [{ index: page.index, rev }];
    const lifetime = pageLifetimeMs(page.maxAt, this.clock.now(), this.options.maxAgeMs);
    try {
      await this.space.set(
        bufferPageKey(channelKey, page.index, rev),
        toVersioned(BUFFER_PAGE_KIND, { entries }),
        lifetime,
      );
    } catch (error) {
      if (rev !== undefined) await deletePages(this.space, channelKey, ours).catch(() => undefined);
      throw error;
    }
    if (rev !== undefined) {
      const moved: PageInfo = { index: page.index, maxAt: page.maxAt, rev };
      const head = { ...state.head, pages: state.head.pages.map((p) => (p === page ? moved : p)) };
      const stored = toVersioned(BUFFER_HEAD_KIND, head);
      if (!(await commitShared(this.space, channelKey, state, stored, rev, ours))) {
        await deletePages(this.space, channelKey, ours);
        return null;
      }
      await deletePages(this.space, channelKey, [page]);
    }
    // Read again from the store when next needed: the kept pages may hold the old entry.
    this.states.forget(channelKey);
    return found.revision;
  }

  /**
   * The page of `head` holding message `id`, newest first, with its entries revised; a Revision
   * when nothing is to be written (not held, or unchanged).
   */
  private async findMessage(
    head: BufferHead,
    loadPage: (page: PageInfo) => Promise<readonly BufferEntry[] | undefined>,
    id: string,
    edit: EntryEdit | undefined,
  ): Promise<FoundPage | Revision> {
    for (const page of [...head.pages].reverse()) {
      const loaded = await loadPage(page);
      if (loaded === undefined) continue;
      const entries = revisedEntries(loaded, id, edit, this.maxEntryChars);
      if (entries === "absent") continue;
      if (entries === "unchanged") return { outcome: "unchanged" };
      const entry = entries.find((e) => e.id === id);
      const revision: Revision = entry ? { outcome: "edited", entry } : { outcome: "deleted" };
      return { head, page, entries, revision };
    }
    return { outcome: "absent" };
  }

  /** The buffer incarnation of a channel, or undefined when nothing is buffered for it. */
  async epochOf(channelKey: string): Promise<string | undefined> {
    return this.mutex.run(channelKey, () =>
      this.retrying(channelKey, "read", async () => (await this.states.state(channelKey))?.head.epoch),
    );
  }

  /**
   * Forget a channel's buffer, its messages' text included (also the way out of a corrupt one,
   * whose pages are unknown and expire): the head stored goes first, so a crash midway leaves an
   * empty buffer, then the pages it lists. It is deleted only while it is the head read
   * (compare-and-delete): shared, a write another process committed before is dropped too on the
   * next attempt, not left behind unlisted, and one committed after starts a new buffer that is
   * kept; alone, nothing moves it meanwhile.
   */
  async drop(channelKey: string): Promise<void> {
    await this.mutex.run(channelKey, async () => {
      this.states.forget(channelKey);
      await this.retrying(channelKey, "drop", () => dropOnce(this.space, channelKey));
      this.states.dropped(channelKey);
    });
  }

  private async drain(channelKey: string): Promise<void> {
    for (;;) {
      const batch = this.queues.get(channelKey) ?? [];
      if (batch.length === 0) {
        this.queues.delete(channelKey);
        return;
      }
      this.queues.set(channelKey, []);
      try {
        const results = await this.mutex.run(channelKey, () =>
          this.write(
            channelKey,
            batch.map((p) => p.input),
          ),
        );
        for (const [i, pending] of batch.entries()) pending.resolve(results[i]);
      } catch (error) {
        for (const pending of batch) pending.reject(error);
      }
    }
  }

  /**
   * Run `attempt` again, from the stored head, while other processes' writes get in its way,
   * pausing between attempts on this buffer's clock.
   */
  private retrying<T>(channelKey: string, what: string, attempt: () => Promise<T | null>): Promise<T> {
    return retrying(
      channelKey,
      what,
      attempt,
      () => this.states.forget(channelKey),
      (ms) => new Promise((resolve) => this.clock.setTimer(resolve, ms)),
    );
  }

  /**
   * Store a batch (under the channel's lock), leaving out messages reported deleted by then: also
   * those appended before their deletion came but still waiting for this write.
   */
  private async write(
    channelKey: string,
    inputs: readonly BufferEntryInput[],
  ): Promise<readonly (AppendResult | undefined)[]> {
    const kept = inputs.filter((input) => !this.deleted.get(deletedKey(channelKey, input.id)));
    const results =
      kept.length === 0
        ? []
        : await this.retrying(channelKey, `write of ${kept.length} message(s)`, () =>
            this.writeOnce(channelKey, kept),
          );
    let next = 0;
    return inputs.map((input) => (kept[next] === input ? results[next++] : undefined));
  }

  /**
   * Write a batch over the head it read. Alone, pages and then the head are written over the last
   * ones. Shared, each page write gets a key of its own (`rev`) and the head is written only if no
   * other process wrote it since it was read; a write that lost deletes its pages and returns
   * null, so no process's messages are ever written over. Page versions the new head no longer
   * lists are deleted once it is stored.
   */
  private async writeOnce(
    channelKey: string,
    inputs: readonly BufferEntryInput[],
  ): Promise<readonly (AppendResult | undefined)[] | null> {
    const state = await this.states.state(channelKey);
    const rev = this.options.shared ? randomBytes(8).toString("hex") : undefined;
    const { maxEntries, maxAgeMs } = this.options;
    const { pageSize, maxEntryChars } = this;
    const now = this.clock.now();
    const placed = placeBatch(state, inputs, { maxEntries, maxAgeMs, pageSize, maxEntryChars, rev }, now);
    const { results, head: trimmed, written } = placed;
    if (written.length === 0) return results;
    const ours = written.map(({ page }) => ({ index: page.index, rev }));
    try {
      await Promise.all(
        written.map(({ page, entries }) =>
          this.space.set(
            bufferPageKey(channelKey, page.index, rev),
            toVersioned(BUFFER_PAGE_KIND, { entries }),
            pageLifetimeMs(page.maxAt, now, this.options.maxAgeMs),
          ),
        ),
      );
    } catch (error) {
      // Shared, no head will list these page keys: delete those that were written.
      if (rev !== undefined) await deletePages(this.space, channelKey, ours).catch(() => undefined);
      throw error;
    }
    const headKey = bufferHeadKey(channelKey);
    const stored = toVersioned(BUFFER_HEAD_KIND, trimmed);
    if (!this.options.shared) await this.space.set(headKey, stored);
    else if (!(await commitShared(this.space, channelKey, state, stored, rev, ours))) {
      await deletePages(this.space, channelKey, ours);
      return null;
    }
    await deletePages(this.space, channelKey, placed.replaced);
    this.states.committed(channelKey, state, placed, stored);
    return results;
  }
}

/** The key a deleted message is remembered under. */
function deletedKey(channelKey: string, id: string): string {
  return `${channelKey}\n${id}`;
}
