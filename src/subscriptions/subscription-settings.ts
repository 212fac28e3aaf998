/**
 * Subscription settings: buffer caps and wake-up timing, with the defaults of the `subscriptions`
 * config section, and the conversion from that section (seconds and hours) to milliseconds.
 */
import type { CoworkerConfig } from "../config/schema.js";

export interface SubscriptionSettings {
  /** Messages kept per channel buffer. */
  readonly bufferMaxMessages: number;
  /** Oldest message kept in a channel buffer, ms. */
  readonly bufferMaxAgeMs: number;
  /** Quiet time after the last match before a batch wakes the session, ms. */
  readonly debounceMs: number;
  /** A batch this big wakes the session at once. */
  readonly maxBatch: number;
  /** Longest a batch waits after its first match, ms. */
  readonly maxWaitMs: number;
  /** Wake-ups per subscription per rolling hour. */
  readonly wakesPerHour: number;
  /** How often a batch held for a busy session re-checks, ms. */
  readonly busyRetryMs: number;
  /** Subscriptions one session may hold. */
  readonly maxPerSession: number;
  /** Subscriptions one person may hold across all their conversations (sessions). */
  readonly maxPerPerson: number;
  /** Default and largest `limit` of catch_up. */
  readonly catchUpDefaultLimit: number;
  readonly catchUpMaxLimit: number;
}

export const DEFAULT_SUBSCRIPTION_SETTINGS: SubscriptionSettings = Object.freeze({
  bufferMaxMessages: 500,
  bufferMaxAgeMs: 168 * 3_600_000,
  debounceMs: 8_000,
  maxBatch: 50,
  maxWaitMs: 30_000,
  wakesPerHour: 12,
  busyRetryMs: 15_000,
  maxPerSession: 20,
  maxPerPerson: 50,
  catchUpDefaultLimit: 50,
  catchUpMaxLimit: 200,
});

/** Settings from the config file's `subscriptions` section (the rest keep their defaults). */
export function settingsFromConfig(section: CoworkerConfig["subscriptions"]): SubscriptionSettings {
  return Object.freeze({
    ...DEFAULT_SUBSCRIPTION_SETTINGS,
    bufferMaxMessages: section.buffer_max_messages,
    bufferMaxAgeMs: Math.round(section.buffer_max_age_h * 3_600_000),
    debounceMs: Math.round(section.debounce_s * 1_000),
    maxBatch: section.max_batch,
    maxWaitMs: Math.max(Math.round(section.max_wait_s * 1_000), Math.round(section.debounce_s * 1_000)),
    wakesPerHour: section.wake_rate_per_hour,
    maxPerPerson: section.max_per_person,
  });
}
