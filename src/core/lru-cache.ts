/**
 * LruCache: a bounded map that forgets its least recently used entries, shared by every layer that
 * caches by key (live sessions, Slack users and threads, trigger lists, recordings). Entries a
 * caller pins (a session with a running turn) are never evicted.
 */

/** A capacity-bounded map ordered by recency of use. */
export class LruCache<K, V> {
  private readonly entries = new Map<K, V>();

  /**
   * @param capacity how many entries to keep (≥ 1)
   * @param isPinned entries for which this returns true are skipped by eviction
   * @param onEvict called with each evicted entry
   */
  constructor(
    private readonly capacity: number,
    private readonly isPinned: (value: V) => boolean = () => false,
    private readonly onEvict: (key: K, value: V) => void = () => {},
  ) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`LRU capacity must be a positive integer, got ${capacity}`);
  }

  /** The entry, marked as most recently used. */
  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  /** The entry without touching its recency. */
  peek(key: K): V | undefined {
    return this.entries.get(key);
  }

  /** Insert or replace as most recently used, then evict unpinned entries over capacity. */
  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    this.evictOverflow();
  }

  /** Remove an entry (not reported to onEvict). */
  delete(key: K): boolean {
    return this.entries.delete(key);
  }

  /** Evict unpinned entries, oldest first, until within capacity (pinned ones may overflow it). */
  evictOverflow(): void {
    if (this.entries.size <= this.capacity) return;
    for (const [key, value] of this.entries) {
      if (this.entries.size <= this.capacity) return;
      if (this.isPinned(value)) continue;
      this.entries.delete(key);
      this.onEvict(key, value);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  /** Live values, least recently used first. */
  values(): IterableIterator<V> {
    return this.entries.values();
  }
}
