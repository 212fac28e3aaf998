/**
 * EventChannel: an unbounded async queue between the turn driver (which pushes events from
 * wherever they happen, including concurrently running tools) and the one consumer that iterates
 * it. The iterator is written out rather than an async generator: a generator costs several
 * promises per item, and every event of every turn passes through here.
 */

/** A single-consumer async queue that ends when closed. */
export class EventChannel<T> implements AsyncIterable<T> {
  private items: T[] = [];
  private head = 0;
  /** The consumer's pending `next()`, when it is waiting for an item. */
  private waiting: ((result: IteratorResult<T, undefined>) => void) | undefined;
  private closed = false;

  /** Queue an item (ignored once closed). */
  push(item: T): void {
    if (this.closed) return;
    const waiting = this.waiting;
    if (waiting) {
      this.waiting = undefined;
      waiting({ value: item, done: false });
    } else this.items.push(item);
  }

  /** No more items; the iterator ends after draining what is queued. */
  close(): void {
    this.closed = true;
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.(DONE);
  }

  [Symbol.asyncIterator](): AsyncIterator<T, undefined> {
    return { next: () => this.next() };
  }

  /** The next item: at once when one is queued, else when one is pushed or the channel closes. */
  private next(): Promise<IteratorResult<T, undefined>> {
    if (this.head < this.items.length) {
      const value = this.items[this.head++] as T;
      if (this.head === this.items.length) {
        this.items = [];
        this.head = 0;
      }
      return Promise.resolve({ value, done: false });
    }
    if (this.closed) return ENDED;
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ value: undefined, done: true });
/** What `next()` answers once the channel is closed and drained (one resolved promise, shared). */
const ENDED: Promise<IteratorReturnResult<undefined>> = Promise.resolve(DONE);
