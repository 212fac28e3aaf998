/**
 * StartOverMap: a map kept for values that are costly to build anew at every call (a platform
 * API's method URLs, their parsed request options), bounded by emptying itself when it is full
 * rather than by order of use. Its keys are a few dozen known ones, so a full map means something
 * else is being asked for (a bug's endless new URLs), and starting over keeps memory flat while a
 * read stays one plain map lookup: an LRU's read rewrites its entry, a cost at every call.
 */

/** A map that empties itself before taking an entry past its limit. */
export class StartOverMap<K, V> {
  private readonly entries = new Map<K, V>();

  /** @param limit the most entries kept (≥ 1) */
  constructor(private readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new RangeError(`StartOverMap limit must be a positive integer, got ${limit}`);
  }

  /** The value kept for `key`, if any. */
  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  /** Keep `value` for `key`; a full map starts over first (every other entry is forgotten). */
  set(key: K, value: V): void {
    if (this.entries.size >= this.limit && !this.entries.has(key)) this.entries.clear();
    this.entries.set(key, value);
  }
}
