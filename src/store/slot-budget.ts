/**
 * Slot budgets: "at most N per window" for one key (a session's wake-ups, a subscription's
 * wake-ups, a person's transcriptions — a paid API call), counted in the store and shared by every
 * process on it. The app builds one over its 'budgets' space and hands it to every part that counts.
 *
 * A key's budget of N is N slots, keys `<key>:<k>` for k in 0..N-1 in the given space; one use
 * claims a free slot with a write-if-absent that expires after the window (atomic across processes
 * on Redis, SQLite and Postgres: KeyvSpace.setIfAbsent). Two claims never hold one slot, and a slot
 * is held for the window after its claim, so any window sees at most N claims of a key, however
 * many processes share the store — the same rule as a sliding window of N, with no counter to
 * increment. The slot holds its claim's time, so a refusal can say when the oldest claim frees.
 * Kept across a restart, like everything in the store.
 */
import { getAll, type KeyValueSpace } from "./store.js";

/** An hour in milliseconds: the default window. */
export const HOUR_MS = 3_600_000;

/** What `take` got: a slot (which `release` gives back early), or none until `freesAt`. */
export type SlotTake =
  | { readonly ok: true; release(): Promise<void> }
  /** `freesAt`: when the oldest held claim ends (ms since the epoch), when that is known. */
  | { readonly ok: false; readonly freesAt: number | undefined };

export interface SlotBudget {
  /**
   * Take one of `key`'s `limit` units now. Rejects when the count cannot be read or written (the
   * caller decides whether that refuses).
   */
  take(key: string, limit: number): Promise<SlotTake>;
}

/** The store key of `key`'s slot `slot`. */
export const slotKey = (key: string, slot: number): string => `${key}:${slot}`;

export interface StoreSlotBudgetOptions {
  /** How long a claimed unit stays used (default an hour; shorter in tests on a real store). */
  readonly windowMs?: number;
  /** The claim's time written in its slot (default Date.now). */
  readonly now?: () => number;
}

/** The budget counted in `space`, shared by every process on the store (see the module header). */
export function storeSlotBudget(space: KeyValueSpace, options: StoreSlotBudgetOptions = {}): SlotBudget {
  const windowMs = options.windowMs ?? HOUR_MS;
  const now = options.now ?? Date.now;
  return {
    async take(key, limit) {
      const keys = Array.from({ length: Math.max(0, limit) }, (_, slot) => slotKey(key, slot));
      if (keys.length === 0) return { ok: false, freesAt: undefined };
      // One read finds the free slots; each claim is then a write-if-absent, so a slot another
      // process claimed since the read is lost to it and the next free one is tried. A slot that
      // frees between the read and the claims is not tried: refusing then errs on the safe side.
      const held = await getAll<unknown>(space, keys);
      for (const [slot, slotName] of keys.entries()) {
        if (held[slot] !== undefined) continue;
        if (await space.setIfAbsent(slotName, now(), windowMs))
          return {
            ok: true,
            release: async () => {
              await space.delete(slotName);
            },
          };
      }
      const times = held.filter((value): value is number => typeof value === "number");
      return { ok: false, freesAt: times.length > 0 ? Math.min(...times) + windowMs : undefined };
    },
  };
}
