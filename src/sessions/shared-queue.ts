/**
 * Shared queue: the per-session input queue in the coordination store when several processes
 * share one store. A process that takes a message (or a wake-up) for a session appends it here
 * instead of to the session's record, which only the lease holder writes; the holder moves the
 * entries into the record in arrival order, each exactly once (a pop hands an entry to one
 * process), dropping redeliveries of messages it already queued or started.
 */
import { z } from "zod";
import type { Coordination } from "../store/coordination/coordination.js";
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

/** Moves a session's shared input into the session, one collector at a time per session. */
export class SharedQueue {
  private readonly collecting = new Map<string, Promise<void>>();

  /**
   * @param take How the holder takes one entry: steer it into the running turn, or queue it in
   *   the record (resolves once saved).
   */
  constructor(
    private readonly coordination: Coordination,
    private readonly take: (live: LiveSession, entry: SharedEntry) => Promise<void>,
    private readonly onBadEntry: (sessionId: string, error: unknown) => void,
  ) {}

  /** Append an entry to the session's shared queue. */
  async offer(sessionId: string, entry: SharedEntry): Promise<void> {
    await this.coordination.push(sharedQueueName(sessionId), JSON.stringify(entry));
  }

  /** Whether entries wait in the session's shared queue. */
  async hasEntries(sessionId: string): Promise<boolean> {
    return (await this.coordination.queueLength(sharedQueueName(sessionId))) > 0;
  }

  /**
   * Take every waiting entry into `live` (the caller holds its lease), oldest first. Collections
   * of one session run one after another, so entries keep their arrival order.
   */
  collect(live: LiveSession): Promise<void> {
    const previous = this.collecting.get(live.id) ?? Promise.resolve();
    const run = previous.then(() => this.drain(live));
    const tail = run.catch(() => undefined);
    this.collecting.set(live.id, tail);
    void tail.then(() => {
      if (this.collecting.get(live.id) === tail) this.collecting.delete(live.id);
    });
    return run;
  }

  /**
   * An entry leaves the queue only once it is saved (taken and its delivery recorded): a holder
   * that dies in between leaves it for the next holder, whose redelivery check drops it if the
   * dead one had saved it after all. Never lost, at worst a redelivery the dedupe keys catch.
   */
  private async drain(live: LiveSession): Promise<void> {
    const queue = sharedQueueName(live.id);
    for (;;) {
      const raw = await this.coordination.peek(queue);
      if (raw === undefined) return;
      const entry = this.parse(live.id, raw);
      const keys = entry?.message.dedupeKeys ?? [];
      if (entry && !(keys.length > 0 && (await live.isRedelivery(keys)))) {
        await this.take(live, entry);
        if (keys.length > 0) await live.recordDelivery(keys);
      }
      // Another collector removed it first only if this one lost its lease: stop then.
      if (!(await this.coordination.removeHead(queue, raw))) return;
    }
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
