/**
 * InboundDedupe: drops inbound deliveries that were already seen. Every id a delivery is known by
 * (Slack event_id, client_msg_id, channel+ts; Telegram update_id) is recorded in the store's
 * "dedupe" space for at least 24 h, so retries, Socket Mode redeliveries and the Slack
 * message/app_mention twin are processed exactly once — also across restarts. Deliveries being
 * handled right now are also known in memory, so a twin arriving meanwhile is caught before either
 * is recorded. A message that starts a turn is recorded only once it is safely queued (the session
 * layer recognises a redelivery of a queued message from the queue itself).
 */
import { type KeyValueSpace, type Store, setAll } from "../store/store.js";

/** The minimum time a seen id is remembered. */
export const MIN_DEDUPE_TTL_MS = 24 * 60 * 60 * 1000;

/** A delivery's dedupe keys, trimmed, without blanks and repeats. */
export function dedupeKeysOf(keys: readonly string[]): string[] {
  return [...new Set(keys.map((k) => k.trim()).filter((k) => k.length > 0))];
}

/** Records seen delivery ids; the first delivery under any of its ids wins. */
export class InboundDedupe {
  private readonly space: KeyValueSpace;
  private readonly ttlMs: number;
  private readonly handling = new Set<string>();

  /** @param ttlMs how long ids are remembered; raised to 24 h when lower */
  constructor(store: Store, ttlMs = 2 * MIN_DEDUPE_TTL_MS) {
    this.space = store.space("dedupe");
    this.ttlMs = Math.max(ttlMs, MIN_DEDUPE_TTL_MS);
  }

  /**
   * Mark a delivery as being handled in this process; undefined when a delivery sharing one of its
   * keys is being handled now. Call the returned function when done with it.
   */
  claim(keys: readonly string[]): (() => void) | undefined {
    const unique = dedupeKeysOf(keys);
    if (unique.some((key) => this.handling.has(key))) return undefined;
    for (const key of unique) this.handling.add(key);
    return () => {
      for (const key of unique) this.handling.delete(key);
    };
  }

  /** Whether any of the keys has been recorded. */
  async seen(keys: readonly string[]): Promise<boolean> {
    const found = await Promise.all(dedupeKeysOf(keys).map((key) => this.space.get(storageKey(key))));
    return found.some((value) => value !== undefined);
  }

  /** Record every key (one commit where the store can); resolves once they are stored. */
  async record(keys: readonly string[]): Promise<void> {
    const at = new Date().toISOString();
    const entries = dedupeKeysOf(keys).map((key) => ({ key: storageKey(key), value: at, ttlMs: this.ttlMs }));
    if (entries.length > 0) await setAll(this.space, entries);
  }

  /**
   * Record every key of one delivery. True when the delivery is new: none of its keys had been
   * seen. All keys are recorded either way, so a twin known by a different id is caught later.
   * A delivery without keys cannot be deduplicated and is always new.
   */
  async firstSeen(keys: readonly string[]): Promise<boolean> {
    const at = new Date().toISOString();
    const fresh = await Promise.all(
      dedupeKeysOf(keys).map((key) => this.space.setIfAbsent(storageKey(key), at, this.ttlMs)),
    );
    return fresh.every(Boolean);
  }
}

function storageKey(key: string): string {
  return `in:${key}`;
}
