/**
 * updateByCompareAndSet: the one loop that changes a store key several processes may write at
 * once — read it, work out the change, write that only over what was read (the store's
 * `replaceIf`, or `setIfAbsent` where nothing was), and start again from a fresh read when another
 * process wrote first, a bounded number of times. Each record kept this way (a scheduled task and
 * its catalog shards, a history's pruned mark, a person's latest Slack thread) used to write the
 * loop out itself; here it is written once, and says plainly how it ended. A value is written only
 * over the very row read (its exact text, where the space reads rows: see `readRows`), so a row in
 * other text than the store writes is updated too, and a row holding no readable value is handed
 * to callers that ask for it, to be replaced.
 */
import { type KeyValueSpace, readRows } from "./store.js";

/** How an update by compare-and-set goes about it. */
export interface CompareAndSetOptions {
  /** How many writes may lose to other processes' before it gives up: a whole number, at least 1. */
  readonly attempts: number;
  /** The TTL of the value written, in milliseconds (none: it never expires). */
  readonly ttlMs?: number;
  /**
   * What the caller believes the key holds (`{ value: undefined }`: nothing): the first attempt
   * works from it without reading the key, saving a round trip; a write lost over it reads the key
   * as usual. Without it every attempt starts with a read.
   */
  readonly believed?: { readonly value: unknown };
  /**
   * True: a row holding no readable value is handed to `change` as its UnreadableRow (and written
   * over, when `change` asks, only while it holds that very text). Otherwise reading one rejects
   * with it, as `get` does.
   */
  readonly readsUnreadable?: boolean;
}

/** How an update by compare-and-set ended. */
export type CompareAndSetResult<V> =
  /** `value` was written over `replaced` (undefined: the key was absent). */
  | { readonly outcome: "updated"; readonly value: V; readonly replaced: unknown }
  /** The change asked for no write over `current` (undefined: absent), as read or believed. */
  | { readonly outcome: "unchanged"; readonly current: unknown }
  /** Other processes wrote the key before each of `attempts` writes: nothing was written. */
  | { readonly outcome: "gave-up"; readonly attempts: number };

/**
 * Change `key` in `space` as it is stored now: `change` gets the value held (undefined when
 * absent or expired; an UnreadableRow with `readsUnreadable`) and returns the value to write, or
 * undefined to leave the key as it is.
 * The value is written only over the row `change` saw, atomically across processes: by
 * `replaceIf` over a row, by `setIfAbsent` where there was none (so a key deleted meanwhile is
 * not written back unless `change` asks for that when it sees it absent). When another process
 * wrote first, the key is read again and `change` asked again, up to `options.attempts` writes.
 * `change` may run once per attempt: it must not assume it runs once. Store failures and
 * whatever `change` throws reject.
 */
export async function updateByCompareAndSet<V>(
  space: KeyValueSpace,
  key: string,
  change: (current: unknown) => V | undefined,
  options: CompareAndSetOptions,
): Promise<CompareAndSetResult<V>> {
  const { attempts, ttlMs, believed, readsUnreadable } = options;
  if (!Number.isSafeInteger(attempts) || attempts < 1) {
    throw new Error(`updating ${key} by compare-and-set needs at least one attempt (got ${attempts})`);
  }
  for (let attempt = 1; attempt <= attempts; attempt++) {
    let current: unknown;
    let expected: unknown;
    if (attempt === 1 && believed) current = expected = believed.value;
    else {
      const [read] = await readRows(space, [key]);
      if (read !== undefined && "unreadable" in read) {
        if (!readsUnreadable) throw read.unreadable;
        current = read.unreadable;
      } else current = read?.value;
      expected = read?.expected;
    }
    const next = change(current);
    if (next === undefined) return { outcome: "unchanged", current };
    const written =
      current === undefined
        ? await space.setIfAbsent(key, next, ttlMs)
        : await space.replaceIf(key, expected, next, ttlMs);
    if (written) return { outcome: "updated", value: next, replaced: current };
  }
  return { outcome: "gave-up", attempts };
}
