/**
 * GroupQueue: group commit for a single connection. Work pushed while the queue is idle is taken
 * up on the next turn of the event loop (so everything pushed in the same turn travels together);
 * work pushed while a batch is running waits and goes out as the next batch. Under load many
 * callers share one round trip; alone, a caller waits at most one event-loop turn.
 */

/** Something a caller awaits: the queue fails it when its batch throws. */
export interface QueuedWork {
  fail(error: unknown): void;
}

/** Batches items and hands each batch, in push order, to `execute` — one batch at a time. */
export class GroupQueue<T extends QueuedWork> {
  private waiting: T[] = [];
  private running: Promise<void> | undefined;

  /** @param execute runs one batch and settles its items; if it throws, every item it was given fails */
  constructor(private readonly execute: (batch: readonly T[]) => Promise<void>) {}

  /** Queue one item; it goes out with the next batch. */
  push(item: T): void {
    this.waiting.push(item);
    this.running ??= this.drain();
  }

  /** Resolves once everything pushed so far has been executed. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    await Promise.resolve();
    while (this.waiting.length > 0) {
      const batch = this.waiting;
      this.waiting = [];
      try {
        await this.execute(batch);
      } catch (error) {
        for (const item of batch) item.fail(error);
      }
    }
    this.running = undefined;
  }
}
