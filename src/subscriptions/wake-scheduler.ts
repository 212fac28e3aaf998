/**
 * WakeScheduler: turns a stream of trigger matches into few wake-ups. Matches are batched per
 * subscription: a batch is delivered once no new match came for the debounce time, or when it
 * reaches the maximum size, or at the latest the maximum wait after its first match — so a burst
 * becomes one wake-up. Two guards hold a ready batch back (it keeps collecting meanwhile): the
 * per-subscription rate limit (so many wake-ups per rolling hour) and a busy session (the batch
 * waits for the end of the running turn: `sessionIdle`, with a periodic re-check as a safety net).
 * Timers and batch ages come from the injected clock; the rate limit is counted in the given
 * SlotBudget (store/slot-budget.ts).
 *
 * With several processes on one store, a channel message reaches one process, but a restarted or
 * newly started process rebuilds pending batches from the shared buffer too; with `claim`, each
 * matched message is claimed in the store before a wake-up delivers it, so it wakes its
 * subscription once across processes, and a batch whose messages were all claimed elsewhere is
 * dropped.
 */
import type { ClaimOnce } from "../approvals/expiry-timers.js";
import type { BufferEntry, BufferPosition } from "./buffer-entry.js";
import type { Clock, TimerHandle } from "./clock.js";
import { HOUR_MS, type SlotBudget } from "../store/slot-budget.js";

/** One matched message and where it sits in its channel buffer. */
export interface WakeItem {
  readonly entry: BufferEntry;
  readonly position: BufferPosition;
}

/** A batch ready to wake its session: items oldest first; `omitted` older matches were dropped for size. */
export interface ReadyBatch {
  readonly subscriptionId: string;
  readonly sessionId: string;
  readonly items: readonly WakeItem[];
  readonly omitted: number;
}

export interface WakeTiming {
  readonly debounceMs: number;
  readonly maxBatch: number;
  readonly maxWaitMs: number;
  readonly maxWakesPerHour: number;
  /** How often a batch held for a busy session re-checks on its own (default 15 s). */
  readonly busyRetryMs?: number;
}

export interface WakeSchedulerOptions extends WakeTiming {
  readonly clock: Clock;
  /** Whether the session is running a turn now (in any process: a promise when that needs a look). */
  readonly isBusy: (sessionId: string) => boolean | Promise<boolean>;
  /** Wake the session with the batch; a rejection is reported to `onError` (the messages stay in the buffer). */
  readonly deliver: (batch: ReadyBatch) => Promise<void>;
  readonly onError: (error: unknown, subscriptionId: string) => void;
  /** Claims a matched message's wake-up in the store (several processes); all are this process's without it. */
  readonly claim?: ClaimOnce;
  /**
   * Where wake-ups per subscription are counted (store/slot-budget.ts): the app's budget over the
   * 'budgets' space, so every process on the store counts together and a restart keeps the count.
   */
  readonly budget: SlotBudget;
}

/** The store key (in 'budgets') under which a subscription's wake-up slots are counted. */
export const subscriptionWakeBudgetKey = (subscriptionId: string): string => `wake:${subscriptionId}`;

/** How soon a batch whose wake-up count could not be checked (or frees at an unknown time) tries again. */
const RATE_RETRY_MS = 15_000;

/** How long a wake claim is kept: past any buffer age at which the message could be re-batched. */
const WAKE_CLAIM_TTL_MS = 8 * 24 * HOUR_MS;

interface PendingBatch {
  readonly subscriptionId: string;
  /** The subscription's session, re-pointed when its thread starts a new one (`add`, `moveSession`). */
  sessionId: string;
  items: WakeItem[];
  omitted: number;
  readonly firstAt: number;
  timer: TimerHandle | undefined;
  /** Why a ready batch is waiting, if it is ("counting": its wake-up slot is being taken). */
  held: "rate" | "busy" | "counting" | undefined;
}

/** Batches trigger matches into wake-ups per subscription. */
export class WakeScheduler {
  private readonly pending = new Map<string, PendingBatch>();
  private readonly wakes: SlotBudget;
  private readonly inFlight = new Set<Promise<void>>();
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
   * it); `sessionId` is the subscription's session now, which the batch then waits for.
   */
  add(subscriptionId: string, sessionId: string, item: WakeItem): void {
    if (this.closed) return;
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
    if (batch.items.some((i) => i.entry.id === item.entry.id)) return;
    batch.items.push(item);
    if (batch.items.length > this.options.maxBatch) {
      batch.items.shift();
      batch.omitted += 1;
    }
    if (batch.held !== undefined) return;
    const due =
      batch.items.length >= this.options.maxBatch
        ? now
        : Math.min(now + this.options.debounceMs, batch.firstAt + this.options.maxWaitMs);
    this.arm(batch, due - now);
  }

  /** Drop the subscription's batch and history (it was removed). */
  cancel(subscriptionId: string): void {
    const batch = this.pending.get(subscriptionId);
    if (batch?.timer !== undefined) this.options.clock.clearTimer(batch.timer);
    this.pending.delete(subscriptionId);
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
          this.deliverNow(batch);
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

  /** Hand the batch to `deliver` (its wake-up is counted). */
  private deliverNow(batch: PendingBatch): void {
    const { subscriptionId } = batch;
    this.pending.delete(subscriptionId);
    const ready: ReadyBatch = {
      subscriptionId,
      sessionId: batch.sessionId,
      items: [...batch.items].sort((a, b) => a.entry.seq - b.entry.seq),
      omitted: batch.omitted,
    };
    const delivery = this.claimed(ready)
      .then((claimed) => (claimed ? this.options.deliver(claimed) : undefined))
      .catch((error: unknown) => this.options.onError(error, subscriptionId))
      .finally(() => this.inFlight.delete(delivery));
    this.inFlight.add(delivery);
  }

  /** The batch with only the messages this process claimed (all without `claim`); undefined when none. */
  private async claimed(batch: ReadyBatch): Promise<ReadyBatch | undefined> {
    const claim = this.options.claim;
    if (!claim) return batch;
    const won = await Promise.all(
      batch.items.map((item) =>
        claim(`wake:${batch.subscriptionId}:${item.position.epoch}:${item.position.seq}`, WAKE_CLAIM_TTL_MS),
      ),
    );
    const items = batch.items.filter((_, index) => won[index]);
    return items.length > 0 ? { ...batch, items } : undefined;
  }
}
