/**
 * EventChannel: an unbounded async queue between the turn driver (which pushes events from
 * wherever they happen, including concurrently running tools) and the async generator the
 * caller iterates.
 */

/** A single-consumer async queue that ends when closed. */
export class EventChannel<T> {
  private items: T[] = [];
  private head = 0;
  private wake: (() => void) | undefined;
  private closed = false;

  /** Queue an item (ignored once closed). */
  push(item: T): void {
    if (this.closed) return;
    this.items.push(item);
    this.signal();
  }

  /** No more items; the iterator ends after draining what is queued. */
  close(): void {
    this.closed = true;
    this.signal();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for (;;) {
      if (this.head < this.items.length) {
        const item = this.items[this.head++] as T;
        if (this.head === this.items.length) {
          this.items = [];
          this.head = 0;
        }
        yield item;
      } else if (this.closed) {
        return;
      } else {
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
      }
    }
  }

  private signal(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
