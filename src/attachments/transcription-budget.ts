/**
 * The hourly transcription budget: how many voice notes and audio files one person may have
 * transcribed in any hour (transcription is a paid API call, so the count is what bounds one
 * person's spend). Two ways to count:
 *
 * - `storeTranscriptionBudget`: in the store, shared by every process on it (and kept across a
 *   restart or a channel's reconnect). A person's budget of N is N slots, keys
 *   `transcription:<person>:<k>` for k in 0..N-1; one transcription claims a free slot with a
 *   write-if-absent that expires after the hour (atomic across processes on Redis, SQLite and
 *   Postgres: KeyvSpace.setIfAbsent). Two claims never hold one slot, and a slot is held for the
 *   hour after its claim, so any hour sees at most N claims of a person, however many processes
 *   share the store — the same rule as a sliding window of N per hour, with no counter to
 *   increment.
 * - `localTranscriptionBudget`: in this process only (an intake built without a store: a channel
 *   constructed on its own, tests).
 */
import { HOUR_MS, HourlyWindow } from "../core/hourly-window.js";
import { getAll, type KeyValueSpace } from "../store/store.js";

export interface TranscriptionBudget {
  /**
   * Take one of `person`'s `perHour` units for a transcription now: true when one was free (it
   * is now used for the hour), false when they have had `perHour` in the last hour. Rejects when
   * the count cannot be read or written.
   */
  take(person: string, perHour: number): Promise<boolean>;
}

/** The store key of `person`'s slot `slot`. */
export const transcriptionSlotKey = (person: string, slot: number): string =>
  `transcription:${person}:${slot}`;

export interface StoreBudgetOptions {
  /** How long a claimed unit stays used (default an hour; shorter in tests on a real store). */
  readonly windowMs?: number;
  /** The claim's time written in its slot, for people reading the store (default Date.now). */
  readonly now?: () => number;
}

/** The budget counted in `space`, shared by every process on the store (see the module header). */
export function storeTranscriptionBudget(
  space: KeyValueSpace,
  options: StoreBudgetOptions = {},
): TranscriptionBudget {
  const windowMs = options.windowMs ?? HOUR_MS;
  const now = options.now ?? Date.now;
  return {
    async take(person, perHour) {
      const keys = Array.from({ length: Math.max(0, perHour) }, (_, slot) =>
        transcriptionSlotKey(person, slot),
      );
      if (keys.length === 0) return false;
      // One read finds the free slots; each claim is then a write-if-absent, so a slot another
      // process claimed since the read is simply lost to it and the next free one is tried. A
      // slot that frees between the read and the claims is not tried: refusing then errs on the
      // operator's side, and the next message sees it free.
      const held = await getAll(space, keys);
      for (const [slot, key] of keys.entries()) {
        if (held[slot] !== undefined) continue;
        if (await space.setIfAbsent(key, now(), windowMs)) return true;
      }
      return false;
    },
  };
}

/** The budget counted in this process alone, on `now` (milliseconds; default Date.now). */
export function localTranscriptionBudget(now: () => number = Date.now): TranscriptionBudget {
  const window = new HourlyWindow();
  return {
    take: async (person, perHour) => {
      const at = now();
      if (window.recent(person, at).length >= perHour) return false;
      window.add(person, at);
      return true;
    },
  };
}
