/**
 * Hand-over lanes: where a channel does the slow part of a message — downloading its files and
 * reading them (PDF text, transcripts) — and then hands it to the session layer. The platform's
 * per-conversation ordering (Telegram's per-chat sequentialize, Slack's per-thread order) then
 * holds only the quick steps (access, commands, queueing here), so one person's slow file never
 * keeps another person's message, or anyone's /stop, waiting.
 *
 * A lane is one sender in one conversation: their messages reach the session layer in the order
 * they sent them ("here is the file", then "what does it say?"), one at a time, while other
 * senders' lanes run beside it. A lane holds at most `maxWaiting` messages; past that `enqueue`
 * refuses (the channel tells the person), so nobody piles up unbounded work. A job's failure is
 * logged and its lane goes on.
 */
import type { Logger } from "pino";

export interface HandOverLanesOptions {
  /** Messages one lane may hold (the running one included). */
  readonly maxWaiting: number;
  readonly logger: Logger;
}

interface Lane {
  tail: Promise<void>;
  waiting: number;
}

/** Per-sender ordered hand-over (see module comment). */
export class HandOverLanes {
  private readonly lanes = new Map<string, Lane>();

  constructor(private readonly options: HandOverLanesOptions) {}

  /**
   * Queue `job` behind the earlier jobs of lane `key` and return at once; false (nothing queued)
   * when the lane already holds `maxWaiting` jobs.
   */
  enqueue(key: string, job: () => Promise<void>): boolean {
    const lane = this.lanes.get(key) ?? { tail: Promise.resolve(), waiting: 0 };
    if (lane.waiting >= this.options.maxWaiting) return false;
    lane.waiting++;
    this.lanes.set(key, lane);
    lane.tail = lane.tail.then(async () => {
      try {
        await job();
      } catch (error) {
        this.options.logger.error({ err: error }, "message hand-over failed");
      } finally {
        lane.waiting--;
        if (lane.waiting === 0 && this.lanes.get(key) === lane) this.lanes.delete(key);
      }
    });
    return true;
  }

  /** Resolves once every lane is empty, jobs queued meanwhile included (a channel stopping). */
  async idle(): Promise<void> {
    while (this.lanes.size > 0) await Promise.all([...this.lanes.values()].map((lane) => lane.tail));
  }
}
