/**
 * Shared queue: the per-session input queue in the coordination store when several processes
 * share one store. Input joins it through an offer — in one step with its delivery claims (a
 * redelivery, on whatever process, changes nothing), the session's place in the index of sessions
 * with work, and the session's lease when nobody holds it. The holder takes the entries into the
 * session's record in arrival order, in memory; they leave the shared queue in the fenced write
 * that first saves the record with them (the session's next save: `untrimmed` counts them), so an
 * entry is always in one of the two places — a holder that dies before saving leaves them to its
 * successor, which takes them from the queue as if new.
 */
import { z } from "zod";
import type { Coordination, OfferOutcome, StoreWrite } from "../store/coordination/coordination.js";
import type { LiveSession } from "./live-session.js";
import { type QueuedMessage, sessionRecordSchema } from "./session-record.js";

/** One entry: the message, and whether it may steer a running turn (a person's message) or waits for its own turn. */
export interface SharedEntry {
  readonly message: QueuedMessage;
  readonly steer: boolean;
}

const entrySchema = z.object({ message: sessionRecordSchema.shape.queue.element, steer: z.boolean() });

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

/** Moves a session's shared input into the session, one taker at a time per session. */
export class SharedQueue {
  private readonly taking = new Map<string, Promise<void>>();
  /** Per session: entries taken into the record that are still in the shared queue. */
  private readonly pending = new Map<string, number>();

  /**
   * @param take How the holder takes one entry: steer it into the running turn, or add it to the
   *   record's queue (in memory: the record's next save carries it).
   */
  constructor(
    private readonly coordination: Coordination,
    private readonly take: (live: LiveSession, entry: SharedEntry) => Promise<void>,
    private readonly onBadEntry: (sessionId: string, error: unknown) => void,
  ) {}

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

  /** Take every entry waiting in the session's shared queue into `live` (the caller holds its lease). */
  collect(live: LiveSession): Promise<void> {
    return this.serialised(live, async () => {
      const items = await this.coordination.items(sharedQueueName(live.id), this.untrimmed(live.id));
      await this.takeFrom(live, items);
    });
  }

  /** How many entries taken into the session's record are still in the shared queue. */
  untrimmed(sessionId: string): number {
    return this.pending.get(sessionId) ?? 0;
  }

  /** A save of the session's record removed `count` of its entries from the shared queue. */
  trimmed(sessionId: string, count: number): void {
    const left = this.untrimmed(sessionId) - count;
    if (left > 0) this.pending.set(sessionId, left);
    else this.pending.delete(sessionId);
  }

  /** The lease is gone: whatever was taken and not saved stays in the queue for the next holder. */
  forget(sessionId: string): void {
    this.pending.delete(sessionId);
  }

  private async takeFrom(live: LiveSession, items: readonly string[]): Promise<void> {
    for (const raw of items) {
      const entry = this.parse(live.id, raw);
      // Counted first: a save the take makes (steering) already removes the entry.
      this.pending.set(live.id, this.untrimmed(live.id) + 1);
      if (entry) await this.take(live, entry);
    }
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
      this.onBadEntry(sessionId, error);
      return undefined;
    }
  }
}
