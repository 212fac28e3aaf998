/**
 * ExpiryTimers: one timer per open pending item, firing at its expiry time. Timers never keep the
 * process alive, and expiries beyond setTimeout's ~24.8-day ceiling are re-armed in steps.
 */
import type { ExpirySchedule } from "./pending-hub-types.js";

/** setTimeout's ceiling. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Keyed expiry timers: the session layer builds them (it fires the expiry) and the hub arms them. */
export class ExpiryTimers implements ExpirySchedule {
  private readonly timers = new Map<string, NodeJS.Timeout>();

  /**
   * @param now the clock expiry times are compared with
   * @param onExpire called once an item's expiry time has passed
   */
  constructor(
    private readonly now: () => Date,
    private readonly onExpire: (id: string) => void,
  ) {}

  /** (Re-)arm the timer for `id`. */
  arm(id: string, expiresAt: string): void {
    this.clear(id);
    const delay = Date.parse(expiresAt) - this.now().getTime();
    const timer = setTimeout(
      () => {
        this.timers.delete(id);
        if (delay > MAX_TIMER_MS) this.arm(id, expiresAt);
        else this.onExpire(id);
      },
      Math.min(Math.max(delay, 0), MAX_TIMER_MS),
    );
    timer.unref();
    this.timers.set(id, timer);
  }

  /** Forget the timer for `id` (settled). */
  clear(id: string): void {
    const timer = this.timers.get(id);
    if (timer) clearTimeout(timer);
    this.timers.delete(id);
  }

  /** Stop every timer (shutdown). */
  clearAll(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}
