/**
 * InboundDedupe: drops inbound deliveries that were already seen. Every id a delivery is known by
 * (Slack event_id, client_msg_id, channel+ts; Telegram update_id) is recorded in the store's
 * "dedupe" space for at least 24 h, so retries, Socket Mode redeliveries and the Slack
 * message/app_mention twin are processed exactly once — also across restarts. Deliveries being
 * handled right now are also known in memory, so a twin arriving meanwhile is caught before either
 * is recorded. A message that starts a turn is recorded only once it is safely queued (the session
 * layer recognises a redelivery of a queued message from the queue itself). The "seen?" read of a
 * message can be started early (`prefetch`, alongside the session lookup); its answer is used only
 * when no write of those keys was under way when it started or began since — else `seen` reads again.
 */
import type { StoreWrite } from "../store/coordination/coordination.js";
import { getAll, type KeyValueSpace, type Store, setAll } from "../store/store.js";
import { isoTime } from "../core/iso-time.js";

/** The minimum time a seen id is remembered. */
export const MIN_DEDUPE_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * A delivery's dedupe keys, trimmed, without blanks and repeats: the list itself when it is so
 * already (every step of a delivery asks again, and a channel's keys nearly always are).
 */
export function dedupeKeysOf(keys: readonly string[]): readonly string[] {
  if (keys.every((key, i) => key.length > 0 && key.trim() === key && keys.indexOf(key) === i)) return keys;
  return [...new Set(keys.map((k) => k.trim()).filter((k) => k.length > 0))];
}

/** Records seen delivery ids; the first delivery under any of its ids wins. */
export class InboundDedupe {
  private readonly space: KeyValueSpace;
  private readonly ttlMs: number;
  private readonly handling = new Set<string>();
  /** Keys being written now (how many writes of each). */
  private readonly writing = new Map<string, number>();
  /** Early "seen?" reads by key, until `seen` takes them or the claim is released. */
  private readonly early = new Map<string, Prefetch>();

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
      for (const key of unique) {
        this.handling.delete(key);
        this.early.delete(key);
      }
    };
  }

  /**
   * Start the "seen?" read of a claimed delivery now, so it overlaps other intake work; the next
   * `seen` of the same keys uses it when it is still trustworthy. Dropped when the claim is released.
   */
  prefetch(keys: readonly string[]): void {
    const unique = dedupeKeysOf(keys);
    if (unique.length === 0) return;
    const prefetch: Prefetch = {
      keys: unique,
      answer: this.read(unique),
      disturbed: unique.some((key) => this.writing.has(key)),
    };
    prefetch.answer.catch(() => undefined);
    for (const key of unique) this.early.set(key, prefetch);
  }

  /**
   * Whether any of the keys has been recorded: the prefetched answer when no write of these keys
   * overlapped it, else read now.
   */
  seen(keys: readonly string[]): Promise<boolean> {
    const unique = dedupeKeysOf(keys);
    const prefetch = unique.length > 0 ? this.early.get(unique[0]!) : undefined;
    for (const key of unique) this.early.delete(key);
    const usable = prefetch && !prefetch.disturbed && sameKeys(prefetch.keys, unique);
    return usable ? prefetch.answer : this.read(unique);
  }

  /**
   * The store writes that record `keys` as seen, for a coordination step that makes them together
   * with the delivery's other writes (several processes: an offer of the delivery's input).
   */
  marksOf(keys: readonly string[]): StoreWrite[] {
    const at = isoTime(new Date());
    return dedupeKeysOf(keys).map((key) => ({
      namespace: "dedupe",
      key: storageKey(key),
      value: at,
      ttlMs: this.ttlMs,
    }));
  }

  /** Record every key (one commit where the store can); resolves once they are stored. */
  record(keys: readonly string[]): Promise<void> {
    const unique = dedupeKeysOf(keys);
    if (unique.length === 0) return Promise.resolve();
    const at = isoTime(new Date());
    const entries = unique.map((key) => ({ key: storageKey(key), value: at, ttlMs: this.ttlMs }));
    return this.writingKeys(unique, () => setAll(this.space, entries));
  }

  /**
   * Record every key of one delivery. True when the delivery is new: none of its keys had been
   * seen. All keys are recorded either way, so a twin known by a different id is caught later.
   * A delivery without keys cannot be deduplicated and is always new.
   */
  async firstSeen(keys: readonly string[]): Promise<boolean> {
    const at = isoTime(new Date());
    const unique = dedupeKeysOf(keys);
    const fresh = await this.writingKeys(unique, () =>
      Promise.all(unique.map((key) => this.space.setIfAbsent(storageKey(key), at, this.ttlMs))),
    );
    return fresh.every(Boolean);
  }

  private async read(keys: readonly string[]): Promise<boolean> {
    const found = await getAll(this.space, keys.map(storageKey));
    return found.some((value) => value !== undefined);
  }

  /** Run a write of `keys`, marking them as being written (early reads of them become untrusted). */
  private async writingKeys<T>(keys: readonly string[], write: () => Promise<T>): Promise<T> {
    for (const key of keys) {
      this.writing.set(key, (this.writing.get(key) ?? 0) + 1);
      const prefetch = this.early.get(key);
      if (prefetch) prefetch.disturbed = true;
    }
    try {
      return await write();
    } finally {
      for (const key of keys) {
        const left = (this.writing.get(key) ?? 1) - 1;
        if (left > 0) this.writing.set(key, left);
        else this.writing.delete(key);
      }
    }
  }
}

/** An early "seen?" read; `disturbed` once a write of its keys overlapped it. */
interface Prefetch {
  readonly keys: readonly string[];
  readonly answer: Promise<boolean>;
  disturbed: boolean;
}

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((key) => b.includes(key));
}

function storageKey(key: string): string {
  return `in:${key}`;
}
