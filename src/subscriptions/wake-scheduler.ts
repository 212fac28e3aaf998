/**
 * WakeScheduler: turns a stream of trigger matches into few wake-ups. Matches are batched per
 * subscription: a batch is delivered once no new match came for the debounce time, or when it
 * reaches the maximum size, or at the latest the maximum wait after its first match — so a burst
 * becomes one wake-up (what a batch holds, and leaves out for size: wake-batch.ts). Three guards
 * hold a ready batch back (it keeps collecting meanwhile): the per-subscription rate limit (so
 * many wake-ups per rolling hour), a busy session (the batch waits for the end of the running
 * turn: `sessionIdle`, with a periodic re-check as a safety net) and the subscription's previous
 * wake-up still being handed over (one at a time, so they arrive in order). A hand-over that fails
 * puts its messages back into the batch, which tries again after a growing pause (or at once on
 * `retryNow`; an hour of failures has the subscriber told: wake-failures.ts): a message is dropped
 * only once delivered (or deleted on the platform: `revise`). Timers and batch ages come from the injected clock; the rate limit is
 * counted in the given SlotBudget (store/slot-budget.ts). What it takes and hands over (options,
 * batches, the notice error): wake-contract.ts.
 *
 * With several processes on one store, a channel message reaches one process, but a restarted or
 * newly started process rebuilds pending batches from the shared buffer too; with `claims`
 * (wake-claims.ts), each matched message is claimed before a wake-up delivers it
 * (wake-hand-over.ts), so it wakes its subscription once across processes. A message delivered
 * elsewhere leaves the batch; one being handed over elsewhere is looked at again once that claim
 * could have lapsed (one timer per subscription), a batch left with none of its messages gives its
 * wake-up slot back, and a failed hand-over puts back only the messages this process claimed.
 */
import type { TimerHandle } from "../core/clock.js";
import type { SlotBudget } from "../store/slot-budget.js";
import { WAKE_CLAIM_TAKE_MS } from "./wake-claims.js";
import type { BufferEntry } from "./buffer-entry.js";
import { inBufferOrder, mergeBack, revisedItems, withItem } from "./wake-batch.js";
import {
  NoticeNotPostedError,
  type ReadyBatch,
  subscriptionWakeBudgetKey,
  type WakeItem,
  type WakeSchedulerOptions,
} from "./wake-contract.js";
import { HandOverFailures } from "./wake-failures.js";
import { claimWakeItems, handOverClaimed } from "./wake-hand-over.js";

/** How soon a batch whose wake-up count could not be checked (or frees at an unknown time) tries again. */
const RATE_RETRY_MS = 15_000;

/** A hand-over under way: the ids of its messages; `cancelled` once its subscription was removed meanwhile. */
interface Flight {
  readonly entryIds: ReadonlySet<string>;
  cancelled: boolean;
}

/** Messages another process is handing over, batched again when `timer` fires. */
interface Recheck {
  readonly timer: TimerHandle;
  readonly items: Map<string, WakeItem>;
  sessionId: string;
}

interface PendingBatch {
  readonly subscriptionId: string;
  /** The subscription's session, re-pointed when its thread starts a new one (`add`, `moveSession`). */
  sessionId: string;
  /** What it holds (wake-batch.ts). */
  items: readonly WakeItem[];
  omitted: number;
  readonly firstAt: number;
  timer: TimerHandle | undefined;
  /**
   * Why a ready batch is waiting, if it is ("counting": its wake-up slot is being taken;
   * "delivering": the subscription's previous wake-up is still being handed over).
   */
  held: "rate" | "busy" | "counting" | "delivering" | undefined;
}

/** Batches trigger matches into wake-ups per subscription. */
export class WakeScheduler {
  private readonly pending = new Map<string, PendingBatch>();
  private readonly wakes: SlotBudget;
  private readonly inFlight = new Set<Promise<void>>();
  /** The hand-over under way per subscription (at most one). */
  private readonly flights = new Map<string, Flight>();
  /** Runs of failed hand-overs per subscription (ended by a delivered one). */
  private readonly failures = new HandOverFailures();
  /** The messages whose claim another process held, re-added later, per subscription. */
  private readonly rechecks = new Map<string, Recheck>();
  private closed = false;

  /** Throws for a timing that is not usable. */
  constructor(private readonly options: WakeSchedulerOptions) {
    if (!(options.maxBatch >= 1 && options.maxWakesPerHour >= 1))
      throw new Error("WakeScheduler maxBatch and maxWakesPerHour must be at least 1");
    if (!(options.debounceMs >= 0 && options.maxWaitMs >= options.debounceMs))
      throw new Error("WakeScheduler needs 0 ≤ debounceMs ≤ maxWaitMs");
    this.wakes = options.budget;
  }

  /**
   * Add a matched message to the subscription's batch (ignored when that message is already in
   * it, or being handed over by this process: rebuilt from the buffer by a sweep); `sessionId` is
   * the subscription's session now, which the batch then waits for.
   */
  add(subscriptionId: string, sessionId: string, item: WakeItem): void {
    if (this.closed || this.flights.get(subscriptionId)?.entryIds.has(item.entry.id)) return;
    const now = this.options.clock.now();
    let batch = this.pending.get(subscriptionId);
    if (!batch) {
      batch = {
        subscriptionId,
        sessionId,
        items: [],
        omitted: 0,
        firstAt: now,
        timer: undefined,
        held: undefined,
      };
      this.pending.set(subscriptionId, batch);
    }
    // The subscription as the registry has it now: another process may have moved it ("new").
    batch.sessionId = sessionId;
    const contents = withItem(batch, item, this.options.maxBatch);
    if (contents === batch) return;
    batch.items = contents.items;
    batch.omitted = contents.omitted;
    if (batch.held !== undefined) return;
    const due =
      batch.items.length >= this.options.maxBatch
        ? now
        : Math.min(now + this.options.debounceMs, batch.firstAt + this.options.maxWaitMs);
    this.arm(batch, due - now);
  }

  /**
   * Message `id` was deleted (`entry` undefined) or edited (`entry`, as now buffered) on the
   * platform: a batch still waiting holds it no more, or holds its new text; one left empty is
   * dropped (no wake-up for nothing). A hand-over already under way keeps what it was given.
   */
  revise(subscriptionId: string, id: string, entry: BufferEntry | undefined): void {
    const recheck = this.rechecks.get(subscriptionId);
    const held = recheck?.items.get(id);
    if (recheck && held) {
      if (entry) recheck.items.set(id, { ...held, entry });
      else recheck.items.delete(id);
    }
    const batch = this.pending.get(subscriptionId);
    if (!batch) return;
    batch.items = revisedItems(batch.items, id, entry);
    if (batch.items.length > 0 || batch.omitted > 0) return;
    if (batch.timer !== undefined) this.options.clock.clearTimer(batch.timer);
    this.pending.delete(subscriptionId);
  }

  /** Drop the subscription's batch and history (it was removed); a hand-over under way is not retried. */
  cancel(subscriptionId: string): void {
    const batch = this.pending.get(subscriptionId);
    if (batch?.timer !== undefined) this.options.clock.clearTimer(batch.timer);
    this.pending.delete(subscriptionId);
    const flight = this.flights.get(subscriptionId);
    if (flight) flight.cancelled = true;
    this.failures.ended(subscriptionId);
    const recheck = this.rechecks.get(subscriptionId);
    if (recheck) this.options.clock.clearTimer(recheck.timer);
    this.rechecks.delete(subscriptionId);
  }

  /** A batch waiting to try a failed hand-over again tries now (e.g. its platform has just connected). */
  retryNow(subscriptionId: string): void {
    const batch = this.pending.get(subscriptionId);
    if (batch?.held === "rate" && this.failures.failing(subscriptionId)) this.arm(batch, 0);
  }

  /** The session's turn ended: batches waiting for it go now (rate limit permitting). */
  sessionIdle(sessionId: string): void {
    for (const batch of this.pending.values()) {
      if (batch.sessionId === sessionId && batch.held === "busy") this.arm(batch, 0);
    }
  }

  /**
   * The subscription's thread switched to session `sessionId` ("new"): its batch now waits for
   * that session — one held for the replaced session's turn stays held until this one is idle.
   */
  moveSession(subscriptionId: string, sessionId: string): void {
    const batch = this.pending.get(subscriptionId);
    if (batch) batch.sessionId = sessionId;
  }

  /** How many messages wait in the subscription's batch. */
  pendingCount(subscriptionId: string): number {
    return this.pending.get(subscriptionId)?.items.length ?? 0;
  }

  /** Stop all timers and wait for deliveries already started. */
  async close(): Promise<void> {
    this.closed = true;
    for (const batch of this.pending.values()) {
      if (batch.timer !== undefined) this.options.clock.clearTimer(batch.timer);
    }
    this.pending.clear();
    for (const recheck of this.rechecks.values()) this.options.clock.clearTimer(recheck.timer);
    this.rechecks.clear();
    await this.settled();
  }

  /** Resolves once every delivery started so far has finished. */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private arm(batch: PendingBatch, delayMs: number): void {
    const { clock } = this.options;
    if (batch.timer !== undefined) clock.clearTimer(batch.timer);
    batch.timer = clock.setTimer(() => this.fire(batch.subscriptionId), Math.max(0, delayMs));
  }

  private fire(subscriptionId: string): void {
    const batch = this.pending.get(subscriptionId);
    if (!batch || this.closed) return;
    batch.timer = undefined;
    if (this.flights.has(subscriptionId)) {
      // Goes once the previous wake-up is handed over (`handedOver`), still collecting meanwhile.
      batch.held = "delivering";
      return;
    }
    const busy = this.options.isBusy(batch.sessionId);
    if (typeof busy === "boolean") {
      this.fireUnlessBusy(batch, busy);
      return;
    }
    busy.then(
      (answer) => this.fireUnlessBusy(batch, answer),
      (error: unknown) => {
        // Unknown: deliver anyway — a wake turn for a busy session simply queues behind its turn.
        this.options.onError(error, subscriptionId);
        this.fireUnlessBusy(batch, false);
      },
    );
  }

  /** Deliver the batch now, unless its session is busy or its wake-ups are over the hourly rate. */
  private fireUnlessBusy(batch: PendingBatch, busy: boolean): void {
    const { subscriptionId } = batch;
    // An answer that came back late finds the batch changed (delivered, re-armed, closed): leave it.
    if (this.closed || this.pending.get(subscriptionId) !== batch || batch.timer !== undefined) return;
    const { clock } = this.options;
    if (busy) {
      batch.held = "busy";
      this.arm(batch, this.options.busyRetryMs ?? 15_000);
      return;
    }
    // While the slot is being taken the batch keeps collecting but is not armed again.
    batch.held = "counting";
    const counting = this.wakes
      .take(subscriptionWakeBudgetKey(subscriptionId), this.options.maxWakesPerHour)
      .then(
        (slot) => {
          if (this.closed || this.pending.get(subscriptionId) !== batch) {
            // Cancelled or closed meanwhile: nothing is delivered, so the slot goes back.
            if (slot.ok)
              slot.release().catch((error: unknown) => this.options.onError(error, subscriptionId));
            return;
          }
          if (!slot.ok) {
            batch.held = "rate";
            const wait = slot.freesAt === undefined ? RATE_RETRY_MS : slot.freesAt - clock.now();
            this.arm(batch, Math.max(wait, 1));
            return;
          }
          this.deliverNow(batch, slot);
        },
        (error: unknown) => {
          // The count could not be checked: report it and try again later (the batch keeps collecting;
          // its messages stay in the buffer), rather than wake past the limit.
          this.options.onError(error, subscriptionId);
          if (this.closed || this.pending.get(subscriptionId) !== batch) return;
          batch.held = "rate";
          this.arm(batch, RATE_RETRY_MS);
        },
      )
      .finally(() => this.inFlight.delete(counting));
    this.inFlight.add(counting);
  }

  /** Hand the batch to `deliver` (its wake-up is counted in `slot`, given back when it fails). */
  private deliverNow(batch: PendingBatch, slot: { release(): Promise<void> }): void {
    const { subscriptionId } = batch;
    this.pending.delete(subscriptionId);
    const ready: ReadyBatch = {
      subscriptionId,
      sessionId: batch.sessionId,
      items: inBufferOrder(batch.items),
      omitted: batch.omitted,
      tellIfFails: this.failures.tellIfFails(subscriptionId, this.options.clock.now()),
    };
    const flight: Flight = { entryIds: new Set(ready.items.map((item) => item.entry.id)), cancelled: false };
    this.flights.set(subscriptionId, flight);
    /**
     * The hand-over of `back` failed (`told`: `deliver` posted the subscriber a notice of it): its
     * messages go back into the batch (unless it was removed).
     */
    const failed = (error: unknown, back: ReadyBatch, told: boolean) => {
      this.options.onError(error, subscriptionId);
      slot.release().catch((failure: unknown) => this.options.onError(failure, subscriptionId));
      if (!(this.closed || flight.cancelled)) this.putBack(back, batch.firstAt, told);
    };
    const delivery = claimWakeItems(this.options.claims, ready, (elsewhere) =>
      this.recheckLater(ready, elsewhere),
    )
      .then(
        (mine) => {
          // None of its messages is this process's to hand over (woken for, or being handed over,
          // elsewhere): no wake-up goes, so its slot goes back.
          if (mine.items.length === 0)
            slot.release().catch((error: unknown) => this.options.onError(error, subscriptionId));
          return handOverClaimed(this.options, mine).then(
            () => this.failures.ended(subscriptionId),
            (error: unknown) =>
              failed(error, mine, mine.tellIfFails === true && !(error instanceof NoticeNotPostedError)),
          );
        },
        // Not known which were claimed: all go back (a claim this process holds is its own again).
        (error: unknown) => failed(error, ready, false),
      )
      .finally(() => {
        this.inFlight.delete(delivery);
        this.handedOver(subscriptionId, flight);
      });
    this.inFlight.add(delivery);
  }

  /**
   * Messages another process is handing over: batched again once its claim could have lapsed. One
   * timer per subscription: messages added while it runs go back with the others when it fires.
   */
  private recheckLater(ready: ReadyBatch, items: readonly WakeItem[]): void {
    const { subscriptionId } = ready;
    const waiting = this.rechecks.get(subscriptionId);
    if (waiting) {
      waiting.sessionId = ready.sessionId;
      for (const item of items) waiting.items.set(item.entry.id, item);
      return;
    }
    const timer = this.options.clock.setTimer(() => {
      this.rechecks.delete(subscriptionId);
      for (const item of recheck.items.values()) this.add(subscriptionId, recheck.sessionId, item);
    }, WAKE_CLAIM_TAKE_MS);
    const recheck: Recheck = {
      timer,
      items: new Map(items.map((item) => [item.entry.id, item])),
      sessionId: ready.sessionId,
    };
    this.rechecks.set(subscriptionId, recheck);
  }

  /**
   * A hand-over failed (`told`: its subscriber was told so): its messages go back into the
   * subscription's batch (merged with those that came meanwhile, the oldest left out beyond the
   * maximum size), which tries again after a pause.
   */
  private putBack(ready: ReadyBatch, firstAt: number, told: boolean): void {
    const { subscriptionId } = ready;
    const current = this.pending.get(subscriptionId);
    if (current?.timer !== undefined) this.options.clock.clearTimer(current.timer);
    const contents = mergeBack(ready, current, this.options.maxBatch);
    const pause = this.failures.failed(subscriptionId, this.options.clock.now(), told);
    const batch: PendingBatch = {
      subscriptionId,
      sessionId: current?.sessionId ?? ready.sessionId,
      ...contents,
      firstAt: Math.min(firstAt, current?.firstAt ?? firstAt),
      timer: undefined,
      held: "rate",
    };
    this.pending.set(subscriptionId, batch);
    this.arm(batch, pause);
  }

  /** The subscription's hand-over ended: a batch that became ready meanwhile goes now. */
  private handedOver(subscriptionId: string, flight: Flight): void {
    if (this.flights.get(subscriptionId) === flight) this.flights.delete(subscriptionId);
    const batch = this.pending.get(subscriptionId);
    if (!this.closed && batch?.held === "delivering") {
      batch.held = undefined;
      this.arm(batch, 0);
    }
  }
}
