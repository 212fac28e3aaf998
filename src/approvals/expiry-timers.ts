/**
 * ExpiryTimers: one timer per open pending item, firing at its expiry time. Timers never keep the
 * process alive, and expiries beyond setTimeout's ~24.8-day ceiling are re-armed in steps. With
 * several processes on one store every process arms the timer of every item it loaded; a `claim`
 * in the store (write-if-absent) makes only the first process to fire expire the item. A claim
 * that fails (the store unreachable just then — for every process at once, as their timers fire
 * together) is tried again later under a key of its own (the failed one may have landed, its
 * answer lost), so a store outage at the expiry never leaves the item open and its turn parked.
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

/** How long after a failed expiry claim it is tried again. */
const CLAIM_RETRY_MS = 30_000;

/** setTimeout's ceiling. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Keyed expiry timers: the session layer builds them (it fires the expiry) and the hub arms them. */
export class ExpiryTimers implements ExpirySchedule {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** Items whose expiry claim is under way, each by its claim (gone when cleared or re-armed meanwhile). */
  private readonly claiming = new Map<string, object>();

  /**
   * @param now the clock expiry times are compared with
   * @param onExpire called once an item's expiry time has passed
   * @param claim when set, `onExpire` runs only in the process whose claim of the expiry landed
   * @param onClaimError told when the claim itself failed (it is tried again after CLAIM_RETRY_MS)
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

  /** Expire the item here, when its claim (the `attempt`th, counted from 0) lands; a failed one is retried. */
  private fire(id: string, expiresAt: string, attempt = 0): void {
    if (!this.claim) {
      this.onExpire(id);
      return;
    }
    const key = attempt === 0 ? `expiry:${id}:${expiresAt}` : `expiry:${id}:${expiresAt}:retry-${attempt}`;
    const claim = {};
    this.claiming.set(id, claim);
    const current = () => this.claiming.get(id) === claim && this.claiming.delete(id);
    this.claim(key, CLAIM_TTL_MS).then(
      (won) => {
        current();
        if (won) this.onExpire(id);
      },
      (error: unknown) => {
        this.onClaimError(error, id);
        // Settled meanwhile (cleared), or re-armed: nothing to retry.
        if (!current()) return;
        const retry = setTimeout(() => {
          this.timers.delete(id);
          this.fire(id, expiresAt, attempt + 1);
        }, CLAIM_RETRY_MS);
        retry.unref();
        this.timers.set(id, retry);
      },
    );
  }

  /** Forget the timer for `id` (settled). */
  clear(id: string): void {
    const timer = this.timers.get(id);
    if (timer) clearTimeout(timer);
    this.timers.delete(id);
    this.claiming.delete(id);
  }

  /** Stop every timer (shutdown). */
  clearAll(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.claiming.clear();
  }
}
