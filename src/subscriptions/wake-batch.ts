/**
 * Wake batch contents: the matched messages a subscription's pending batch holds, and how many
 * older ones were left out to keep it at most `maxBatch` long (the wake-up tells the session so;
 * they stay in the buffer for catch_up). A message is held once, by id. A message added past the
 * maximum leaves out the first one added; a failed hand-over's messages put back are merged with
 * those that came meanwhile in buffer order, the oldest left out. A message deleted on the
 * platform leaves the batch, an edited one is held with its new text. Apart from wake-scheduler.ts,
 * which decides when a batch goes: this only decides what it holds.
 */
import type { BufferEntry } from "./buffer-entry.js";
import type { WakeItem } from "./wake-contract.js";

/** A batch's messages (in the order added, or buffer order once merged) and the count left out. */
export interface BatchContents {
  readonly items: readonly WakeItem[];
  readonly omitted: number;
}

/**
 * `contents` with `item` added, the first added left out when that goes past `maxBatch`; the same
 * object when it holds that message already.
 */
export function withItem(contents: BatchContents, item: WakeItem, maxBatch: number): BatchContents {
  if (contents.items.some((held) => held.entry.id === item.entry.id)) return contents;
  const items = [...contents.items, item];
  if (items.length <= maxBatch) return { items, omitted: contents.omitted };
  return { items: items.slice(1), omitted: contents.omitted + 1 };
}

/**
 * The messages of a failed hand-over (`back`) merged with those that came meanwhile (`current`):
 * each once (the later copy kept), in buffer order, the oldest left out beyond `maxBatch` and
 * counted with those both had left out already.
 */
export function mergeBack(
  back: BatchContents,
  current: BatchContents | undefined,
  maxBatch: number,
): BatchContents {
  const byId = new Map<string, WakeItem>();
  for (const item of [...back.items, ...(current?.items ?? [])]) byId.set(item.entry.id, item);
  const all = inBufferOrder([...byId.values()]);
  const overflow = Math.max(0, all.length - maxBatch);
  return { items: all.slice(overflow), omitted: back.omitted + (current?.omitted ?? 0) + overflow };
}

/** The messages oldest first (by their place in the channel buffer). */
export function inBufferOrder(items: readonly WakeItem[]): WakeItem[] {
  return [...items].sort((a, b) => a.entry.seq - b.entry.seq);
}

/**
 * `items` without message `id` (deleted on the platform: `entry` undefined), or holding `entry`,
 * its edited form, in its place.
 */
export function revisedItems(
  items: readonly WakeItem[],
  id: string,
  entry: BufferEntry | undefined,
): WakeItem[] {
  if (entry === undefined) return items.filter((item) => item.entry.id !== id);
  return items.map((item) => (item.entry.id === id ? { ...item, entry } : item));
}
