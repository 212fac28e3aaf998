/**
 * EventChannel: an unbounded async queue between the turn driver (which pushes events from
 * wherever they happen, including concurrently running tools) and the one consumer that iterates
 * it. The iterator is written out rather than an async generator: a generator costs several
 * promises per item, and every event of every turn passes through here. An optional `beforeEnd`
 * runs once, when the consumer first reaches the end, and the end is reported once it has resolved
 * (a turn winds down there before its caller hears that the turn is over).
 */

/** A single-consumer async queue that ends when closed. */
export class EventChannel<T> implements AsyncIterable<T> {
  private items: T[] = [];
  private head = 0;
  /** The consumer's pending `next()`, when it is waiting for an item. */
  private waiting:
    | ((result: IteratorResult<T, undefined> | PromiseLike<IteratorResult<T, undefined>>) => void)
    | undefined;
  private closed = false;
  private ending: Promise<IteratorResult<T, undefined>> | undefined;

  /** @param beforeEnd awaited before the end is reported to the consumer */
  constructor(private readonly beforeEnd?: () => Promise<void>) {}

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
    waiting?.(this.end());
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
    if (this.closed) return this.end();
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  private end(): Promise<IteratorResult<T, undefined>> {
    this.ending ??= this.beforeEnd ? this.beforeEnd().then(() => DONE) : Promise.resolve(DONE);
    return this.ending;
  }
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ value: undefined, done: true });
