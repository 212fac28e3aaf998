/**
 * KeyedMutex: serialises async tasks that share a key, inside one process. Used for the
 * store's get-then-set `setIfAbsent` on backends without an atomic insert, and to keep appends
 * to one session's history in order.
 */

/** Runs tasks one at a time per key; tasks on different keys run concurrently. */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  /** Run `task` once every earlier task on `key` has settled; resolves or rejects with it. */
  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const done = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = previous.then(() => done);
    this.tails.set(key, tail);
    await previous;
    try {
      return await task();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /** Number of keys with a task running or queued (for leak checks in tests). */
  get activeKeys(): number {
    return this.tails.size;
  }
}
