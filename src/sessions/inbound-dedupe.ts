/**
 * InboundDedupe: drops inbound deliveries that were already seen. Every id a delivery is known by
 * (Slack event_id, client_msg_id, channel+ts; Telegram update_id) is recorded in the store's
 * "dedupe" space for at least 24 h, so retries, Socket Mode redeliveries and the Slack
 * message/app_mention twin are processed exactly once — also across restarts.
 */
import type { KeyValueSpace, Store } from "../store/store.js";

/** The minimum time a seen id is remembered. */
export const MIN_DEDUPE_TTL_MS = 24 * 60 * 60 * 1000;

/** Records seen delivery ids; the first delivery under any of its ids wins. */
export class InboundDedupe {
  private readonly space: KeyValueSpace;
  private readonly ttlMs: number;

  /** @param ttlMs how long ids are remembered; raised to 24 h when lower */
  constructor(store: Store, ttlMs = 2 * MIN_DEDUPE_TTL_MS) {
    this.space = store.space("dedupe");
    this.ttlMs = Math.max(ttlMs, MIN_DEDUPE_TTL_MS);
  }

  /**
   * Record every key of one delivery. True when the delivery is new: none of its keys had been
   * seen. All keys are recorded either way, so a twin known by a different id is caught later.
   * A delivery without keys cannot be deduplicated and is always new.
   */
  async firstSeen(keys: readonly string[]): Promise<boolean> {
    const unique = [...new Set(keys.map((k) => k.trim()).filter((k) => k.length > 0))];
    const at = new Date().toISOString();
    const fresh = await Promise.all(unique.map((key) => this.space.setIfAbsent(`in:${key}`, at, this.ttlMs)));
    return fresh.every(Boolean);
  }
}
