/**
 * The dedupe keys of the deliveries a session record holds (its queued messages' and its turn in
 * progress's), and which of them are known to be recorded as seen already. A live session uses it
 * to tell which keys a record change lets go of that must be recorded before that record is saved,
 * so a redelivery is recognised from the queue or from the dedupe marks, never from neither.
 */
import type { SessionRecord } from "./session-record.js";

/** Whether `record` holds a delivery under one of `keys`: a queued message (steering included) or the turn in progress's. */
export function holdsDelivery(record: SessionRecord, keys: readonly string[]): boolean {
  const held = (own: readonly string[] | undefined) => own?.some((key) => keys.includes(key)) === true;
  return held(record.pendingTurn?.dedupeKeys) || record.queue.some((m) => held(m.dedupeKeys));
}

/** Dedupe keys of held deliveries already recorded as seen (in memory: empty after a reload). */
export class RecordedDeliveryKeys {
  private readonly recorded = new Set<string>();

  /** `key` (of a delivery the record holds) is recorded as seen. */
  add(key: string): void {
    this.recorded.add(key);
  }

  /** Forget every key (the record was read again). */
  clear(): void {
    this.recorded.clear();
  }

  /** Dedupe keys `before` holds and `after` no longer does that may not be recorded yet. */
  leaving(before: SessionRecord, after: SessionRecord): string[] {
    if (before.queue === after.queue && before.pendingTurn === after.pendingTurn) return [];
    const held = heldKeys(before);
    if (held.length === 0) return held;
    const staying = new Set(heldKeys(after));
    const leaving: string[] = [];
    for (const key of held) {
      if (staying.has(key)) continue;
      if (!this.recorded.delete(key)) leaving.push(key);
    }
    return leaving;
  }
}

/** The dedupe keys a record holds: its queued messages' and its turn in progress's. */
function heldKeys(record: SessionRecord): string[] {
  return [
    ...(record.pendingTurn?.dedupeKeys ?? []),
    ...record.queue.flatMap((message) => message.dedupeKeys ?? []),
  ];
}
