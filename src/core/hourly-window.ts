/**
 * HourlyWindow: per key, the times of the events in the last hour — the sliding window behind
 * "at most N per hour" (wake-ups per subscription and per session for wake_me_later,
 * transcriptions per person). Keys whose events are all over an hour old are forgotten, so a
 * long-running process does not keep one entry per key it ever saw.
 */

/** The window's length. */
export const HOUR_MS = 3_600_000;
/** Keys kept before the ones with no event in the last hour are swept. */
const SWEEP_AT_KEYS = 1_024;

export class HourlyWindow {
  private readonly times = new Map<string, number[]>();

  /** Times of `key`'s events in the hour before `now`, oldest first. */
  recent(key: string, now: number): readonly number[] {
    const recent = (this.times.get(key) ?? []).filter((at) => at > now - HOUR_MS);
    if (recent.length > 0) this.times.set(key, recent);
    else this.times.delete(key);
    return recent;
  }

  /** Count an event of `key` at `now`. */
  add(key: string, now: number): void {
    const times = this.times.get(key);
    if (times) times.push(now);
    else this.times.set(key, [now]);
    if (this.times.size > SWEEP_AT_KEYS) this.sweep(now);
  }

  /** Take back one event of `key` counted at `at` (it did not happen after all). */
  drop(key: string, at: number): void {
    const times = this.times.get(key);
    const index = times?.indexOf(at) ?? -1;
    if (index < 0 || !times) return;
    times.splice(index, 1);
    if (times.length === 0) this.times.delete(key);
  }

  /** Forget `key`'s events. */
  forget(key: string): void {
    this.times.delete(key);
  }

  private sweep(now: number): void {
    for (const [key, times] of this.times) if ((times.at(-1) ?? 0) <= now - HOUR_MS) this.times.delete(key);
  }
}
