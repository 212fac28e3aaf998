/**
 * TranscriptionBudget: how many voice notes and audio files one person may have transcribed in a
 * rolling hour. Transcription is billed by the minute, and the length cap rests on the duration
 * the platform reports — on Telegram the sender's own word — so the count is what bounds one
 * person's spend. Kept in memory, per process (with several processes each has its own count).
 */
import { LruCache } from "../sessions/lru.js";

const HOUR_MS = 60 * 60 * 1_000;

/** People whose recent transcriptions are remembered; the least recently seen are forgotten first. */
const PEOPLE_REMEMBERED = 10_000;

/** Counts each person's transcriptions over the last hour. */
export class TranscriptionBudget {
  private readonly used = new LruCache<string, readonly number[]>(PEOPLE_REMEMBERED);

  /**
   * @param perHour transcriptions one person may have per rolling hour
   * @param now the clock (milliseconds)
   */
  constructor(
    readonly perHour: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Take one transcription for `person` (platform-qualified id); false when their hour's allowance is spent. */
  take(person: string): boolean {
    const at = this.now();
    const recent = (this.used.get(person) ?? []).filter((then) => then > at - HOUR_MS);
    const allowed = recent.length < this.perHour;
    this.used.set(person, allowed ? [...recent, at] : recent);
    return allowed;
  }
}
