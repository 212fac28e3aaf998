/**
 * Shared queue: the per-session input queue in the coordination store when several processes
 * share one store. Input joins it through an offer — in one step with its delivery claims (a
 * redelivery, on whatever process, changes nothing), the session's place in the index of sessions
 * with work, and the session's lease when nobody holds it. The holder takes the entries into the
 * session's record in arrival order, in memory; they leave the shared queue in the fenced write
 * that first saves the record with them, so an entry is always in one of the two places — a
 * holder that dies before saving leaves them to its successor, which takes them from the queue as
 * if new. A record is built before its save runs (after the saves before it), and entries taken in
 * between are not in it: what it carries is read when it is built (`takenSoFar`), and its save
 * removes those entries only. A take reads the queue from the first entry not counted, so it waits
 * for saves under way that remove counted entries (`saveTaken`): read while such a removal had
 * landed but was not yet counted off, it skipped as many entries, and the save after it removed
 * entries nobody took. Entries the holder does not take (their session's queue is full, or they
 * cannot be read) leave the shared queue at once — the refused entries in a row in one fenced
 * write, made before the next entry is taken: refused input is not kept. Once entries that cannot
 * be read have left, the session's thread is told (`tellUnreadableThrough`): the queue is the
 * session's, so its own record says where — nothing of the unreadable entry is trusted for it.
 */
import type { Logger } from "pino";
import { z } from "zod";
import {
  type Coordination,
  type FenceRef,
  type OfferOutcome,
  StaleFenceError,
  type StoreWrite,
} from "../store/coordination/coordination.js";
import type { ThreadTarget } from "../core/thread-target.js";
import type { LiveSession } from "./live-session.js";
import { type QueuedMessage, sessionRecordSchema } from "./session-record.js";
import type { GateInput } from "./turn-gate.js";

/** One lease's count of a session's entries: taken into the record, and removed by its saves. */
interface Tally {
  taken: number;
  trimmed: number;
}

/**
 * The shared-queue entries a record carries, read when it was built: the first `taken` its
 * holder took in under one lease (`tally`, whose saves remove them).
 */
export interface TakenInRecord {
  readonly tally: object;
  readonly taken: number;
}

/** One entry: the message, and how the holder takes it. */
export interface SharedEntry extends GateInput {
  readonly message: QueuedMessage;
}

const entrySchema = z.object({
  message: sessionRecordSchema.shape.queue.element,
  steer: z.boolean(),
  // Entries queued before it was written were a person's messages.
  capped: z.boolean().default(true),
});

/** How a thread is told something (SessionManager.notify): rejects when the post fails. */
export type ThreadNotice = (target: ThreadTarget, text: string) => Promise<void>;

/** Why an entry of the shared queue cannot be read, as a thread is told. */
const UNREADABLE = "could not be read (sent by a newer version of the service, or damaged)";

/** Queue name of a session's shared input. */
export const sharedQueueName = (sessionId: string) => `input:${sessionId}`;

/** What an offer of a session's input needs besides the entry. */
export interface OfferTerms {
  /** The delivery's claims (its dedupe marks). */
  readonly claims: readonly StoreWrite[];
  /** The index of sessions with work. */
  readonly index: string;
  /** The session's lease: taken for this process when free. */
  readonly lease: { readonly key: string; readonly ttlMs: number; readonly owner: string };
}

/** How the holder takes the entries of a session it holds (the lease gate). */
export interface SharedInputTaker {
  /** Whether the session takes the entry; one it refuses leaves the shared queue at once. */
  admits(live: LiveSession, entry: SharedEntry): Promise<boolean>;
  /**
   * Take an admitted entry: steer the running turn with it, or add it to the record's queue (in
   * memory: the record's next save carries it).
   */
  take(live: LiveSession, entry: SharedEntry): Promise<void>;
  /** The fence of the session's lease held here, which the removal of a refused entry carries. */
  fenceOf(sessionId: string): FenceRef | undefined;
}

/** Moves a session's shared input into the session, one taker at a time per session. */
export class SharedQueue {
  private readonly taking = new Map<string, Promise<void>>();
  /** Per session held here: its entries taken into the record, and removed by its saves. */
  private readonly tallies = new Map<string, Tally>();
  /** Per session: saves under way that remove counted entries from the shared queue. */
  private readonly saving = new Map<string, Set<Promise<unknown>>>();
  /** How a session's thread is told its input could not be read (until set: only logged). */
  private notice: ThreadNotice | undefined;

  constructor(
    private readonly coordination: Coordination,
    private readonly taker: SharedInputTaker,
    private readonly logger: Logger,
  ) {}

  /** Tell a session's thread through `notice` when input queued there could not be read. */
  tellUnreadableThrough(notice: ThreadNotice): void {
    this.notice = notice;
  }

  /** Offer an entry for the session (see the module comment). */
  offer(sessionId: string, entry: SharedEntry, terms: OfferTerms): Promise<OfferOutcome> {
    return this.coordination.offer({
      queue: sharedQueueName(sessionId),
      item: JSON.stringify(entry),
      claims: terms.claims,
      index: { set: terms.index, member: sessionId },
      lease: terms.lease,
    });
  }

  /**
   * Take the entries an offer handed over with the lease (the whole queue, oldest first) into
   * `live`; entries this process took before are skipped.
   */
  takeItems(live: LiveSession, items: readonly string[]): Promise<void> {
    return this.serialised(live, async () => this.takeFrom(live, items.slice(this.untrimmed(live.id))));
  }

  /**
   * Take every entry waiting in the session's shared queue into `live` (the caller holds its
   * lease). The queue is read once no save is removing counted entries from it, in the same step
   * as the count is read: a removal sent after the read lands after it.
   */
  collect(live: LiveSession): Promise<void> {
    return this.serialised(live, async () => {
      for (let saves = this.saving.get(live.id); saves; saves = this.saving.get(live.id))
        await Promise.allSettled([...saves]);
      const items = await this.coordination.items(sharedQueueName(live.id), this.untrimmed(live.id));
      await this.takeFrom(live, items);
    });
  }

  /** The entries a record of the session built now carries (to pass to its save: `saveTaken`). */
  takenSoFar(sessionId: string): TakenInRecord | undefined {
    const tally = this.tallies.get(sessionId);
    return tally && { tally, taken: tally.taken };
  }

  /**
   * Save the session's record, which carries `carried` (`takenSoFar` when it was built), through
   * `write`, which removes the `count` of them still in the shared queue in the same fenced step
   * (resolving once it did; rejecting when it was refused): they are counted off once it did, and
   * a take meanwhile waits for it. Entries taken in under an earlier lease, since forgotten, are
   * not removed: they are the next holder's to take.
   */
  async saveTaken(
    sessionId: string,
    carried: TakenInRecord | undefined,
    write: (count: number) => Promise<void>,
  ): Promise<void> {
    const tally = this.tallies.get(sessionId);
    const count = tally && carried?.tally === tally ? Math.max(0, carried.taken - tally.trimmed) : 0;
    if (!tally || count === 0) return write(0);
    const written = write(count);
    const saves = this.saving.get(sessionId) ?? new Set<Promise<unknown>>();
    this.saving.set(sessionId, saves);
    saves.add(written);
    try {
      await written;
      tally.trimmed += count;
    } finally {
      saves.delete(written);
      if (saves.size === 0 && this.saving.get(sessionId) === saves) this.saving.delete(sessionId);
    }
  }

  /** How many entries taken into the session's record are still in the shared queue. */
  untrimmed(sessionId: string): number {
    const tally = this.tallies.get(sessionId);
    return tally ? tally.taken - tally.trimmed : 0;
  }

  /** The lease is gone: whatever was taken and not saved stays in the queue for the next holder. */
  forget(sessionId: string): void {
    this.tallies.delete(sessionId);
  }

  private async takeFrom(live: LiveSession, items: readonly string[]): Promise<void> {
    const refused: string[] = [];
    let unreadable = 0;
    for (const raw of items) {
      const entry = this.parse(live.id, raw);
      if (!entry) unreadable++;
      if (!entry || !(await this.taker.admits(live, entry))) {
        refused.push(raw);
        continue;
      }
      // The refused entries before it leave first: a save trims the queue's first entries, which
      // are then the counted ones only.
      await this.remove(live, refused.splice(0), unreadable);
      unreadable = 0;
      // Counted first: a save the take makes (steering) already removes the entry.
      const tally = this.tallies.get(live.id) ?? { taken: 0, trimmed: 0 };
      this.tallies.set(live.id, tally);
      tally.taken += 1;
      await this.taker.take(live, entry);
    }
    await this.remove(live, refused, unreadable);
  }

  /**
   * Remove entries that are not taken from the shared queue, in one write under the session's
   * fence (none: nothing to write). They are never counted: the entries counted are the queue's
   * first ones, which a save trims (an equal entry among them, removed in its place, is the same
   * input: the same entries remain). When the removal fails the take stops there, and the entries
   * — left in the queue, or removed after all — are where the next take starts (a refused
   * removal: the lease is gone, the entries are the next holder's). Once they are removed, the
   * thread is told of the `unreadable` ones among them.
   */
  private async remove(live: LiveSession, raws: readonly string[], unreadable: number): Promise<void> {
    if (raws.length === 0) return;
    const fence = this.taker.fenceOf(live.id);
    if (!fence)
      throw new Error(`session ${live.id} is not held here: its queued input is its holder's to take`);
    const queue = sharedQueueName(live.id);
    const removal = raws.map((item) => ({ op: "remove-item" as const, queue, item }));
    if (!(await this.coordination.fencedWrite(fence, removal))) throw new StaleFenceError(fence);
    if (unreadable > 0) this.tellUnreadable(live, unreadable);
  }

  /**
   * Tell the session's thread that `count` messages queued there could not be read and were
   * dropped, so they are sent again; not waited for (the take goes on), a failure logged.
   */
  private tellUnreadable(live: LiveSession, count: number): void {
    const text =
      count === 1
        ? `A message sent in this thread ${UNREADABLE}, so it was not run: please send it again.`
        : `${count} messages sent in this thread ${UNREADABLE}, so they were not run: please send them again.`;
    const failed = (error: unknown) =>
      this.logger.error(
        { err: error, sessionId: live.id, count },
        "telling the thread about its unreadable queued input failed",
      );
    if (this.notice) this.notice(live.record.target, text).catch(failed);
    else failed(new Error("no way to reach the thread is set"));
  }

  /** Takes of one session run one after another, so entries keep their arrival order. */
  private serialised(live: LiveSession, step: () => Promise<void>): Promise<void> {
    const previous = this.taking.get(live.id) ?? Promise.resolve();
    const run = previous.then(step);
    const tail = run.catch(() => undefined);
    this.taking.set(live.id, tail);
    void tail.then(() => {
      if (this.taking.get(live.id) === tail) this.taking.delete(live.id);
    });
    return run;
  }

  private parse(sessionId: string, raw: string): SharedEntry | undefined {
    try {
      return entrySchema.parse(JSON.parse(raw)) as SharedEntry;
    } catch (error) {
      this.logger.error({ err: error, sessionId }, "dropping an unreadable queued input");
      return undefined;
    }
  }
}
