/**
 * ExpiryTimers: one timer per open pending item, firing at its expiry time. Timers never keep the
 * process alive, and expiries beyond setTimeout's ~24.8-day ceiling are re-armed in steps. With
 * several processes on one store every process arms the timer of every item it loaded; a `claim`
 * in the store (write-if-absent) makes only the first process to fire expire the item.
 */
import type { ExpirySchedule } from "./pending-hub-types.js";

import type { Coordination } from "../store/coordination/coordination.js";

/** Claims a key in the store for `ttlMs`: true for the one caller whose claim landed. */
export type ClaimOnce = (key: string, ttlMs: number) => Promise<boolean>;

/** `{ claim }` through a coordination shared by several processes; nothing in one process. */
export function claimAcrossProcesses(coordination: Coordination | undefined): { claim?: ClaimOnce } {
  return coordination?.distributed ? { claim: (key, ttlMs) => coordination.claimOnce(key, ttlMs) } : {};
}

/** How long an expiry claim is kept: far longer than processes take to fire the same timer. */
const CLAIM_TTL_MS = 3_600_000;

/** setTimeout's ceiling. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Keyed expiry timers: the session layer builds them (it fires the expiry) and the hub arms them. */
export class ExpiryTimers implements ExpirySchedule {
  private readonly timers = new Map<string, NodeJS.Timeout>();

  /**
   * @param now the clock expiry times are compared with
   * @param onExpire called once an item's expiry time has passed
   * @param claim when set, `onExpire` runs only in the process whose claim of the expiry landed
   * @param onClaimError told when the claim itself failed (the item then expires elsewhere or later)
   */
  constructor(
    private readonly now: () => Date,
    private readonly onExpire: (id: string) => void,
    private readonly claim?: ClaimOnce,
    private readonly onClaimError: (error: unknown, id: string) => void = () => undefined,
  ) {}

  /** (Re-)arm the timer for `id`. */
  arm(id: string, expiresAt: string): void {
    this.clear(id);
    const delay = Date.parse(expiresAt) - this.now().getTime();
    const timer = setTimeout(
      () => {
        this.timers.delete(id);
        if (delay > MAX_TIMER_MS) this.arm(id, expiresAt);
        else this.fire(id, expiresAt);
      },
      Math.min(Math.max(delay, 0), MAX_TIMER_MS),
    );
    timer.unref();
    this.timers.set(id, timer);
  }

  private fire(id: string, expiresAt: string): void {
    if (!this.claim) {
      this.onExpire(id);
      return;
    }
    this.claim(`expiry:${id}:${expiresAt}`, CLAIM_TTL_MS).then(
      (won) => {
        if (won) this.onExpire(id);
      },
      (error: unknown) => this.onClaimError(error, id),
    );
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
