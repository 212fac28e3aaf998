/**
 * SharedTurnSlots: the per-person turn cap (person-turn-slots.ts) counted across every process on
 * one store, for the multi-process mode — without it a person could run the cap's worth of turns
 * in each process. Slot k of a person is a lease on `turn-slot:<person>:<k>` (k below the cap),
 * taken through the coordination with a TTL, renewed by heartbeat while its turn runs and released
 * as the turn ends; a dead process's slots lapse with their TTL. The leases are held by a
 * SessionLeases of the slots' own (lease-lock.ts: its heartbeat, and its own-clock deadline), so in
 * the store their keys carry its `session:` prefix.
 *
 * A turn that finds every slot taken waits: it tries again whenever a process publishes that it
 * released one of the person's slots (RELEASED_CHANNEL; a release in this process wakes its own
 * waiters at once), and at the latest after a back-off doubling up to the lease renewal interval —
 * so a lost message, or a holder that died and never releases, cannot wedge it.
 *
 * Best effort, not a fair line: whoever asks first after a release gets the slot, so a turn
 * waiting in one process may be overtaken by a later one in another (within one process, waiters
 * are woken in the order they began to wait). Each process counts up to its own configured cap.
 * A slot whose lease is lost while its turn runs (a renewal refused, or none confirmed within the
 * TTL: the store unreachable) is simply gone — the turn is not stopped, and another turn may take
 * the slot meanwhile, the cap exceeded by one until it ends. The session's own lease, not a slot,
 * is what guards the turn's state.
 */
import type { Logger } from "pino";
import { backoffMs } from "../core/backoff.js";
import type { Coordination } from "../store/coordination/coordination.js";
import { DEFAULT_LEASE_TIMING, type HeldSession, type LeaseTiming, SessionLeases } from "./lease-lock.js";
import { checkTurnsPerPerson, type TurnSlots } from "./person-turn-slots.js";

/** The channel every process announces its slot releases on (`{ from, person }` as JSON). */
export const RELEASED_CHANNEL = "turn-slot-released";

/** The first wait of a turn waiting for a slot before it asks again unprompted. */
const FIRST_RETRY_MS = 50;

/** The lease id of a person's slot `k` (SessionLeases adds its key prefix). */
export const turnSlotId = (person: string, k: number): string => `turn-slot:${person}:${k}`;

export interface SharedTurnSlotsOptions {
  readonly coordination: Coordination;
  /** Turns one person may run at once, across the processes (a positive whole number). */
  readonly perPerson: number;
  /** Names this process in its slot leases and release messages (no "/"). */
  readonly processId: string;
  /** The slot leases' TTL and renewal interval; default DEFAULT_LEASE_TIMING. */
  readonly timing?: LeaseTiming | undefined;
  /** The first back-off of a waiting turn (default 50 ms; doubles up to the renewal interval). */
  readonly firstRetryMs?: number | undefined;
  readonly logger: Logger;
}

/** A turn of this process waiting for a person's slot. */
interface Waiter {
  /** Resolves at the next release of the person's slot heard of, or once `ms` passed. */
  within(ms: number): Promise<void>;
  /** Stop listening (once the wait is over). */
  stop(): void;
}

/** Per-person turn slots shared by every process on one coordination. */
export class SharedTurnSlots implements TurnSlots {
  readonly perPerson: number;
  private readonly leases: SessionLeases;
  private readonly timing: LeaseTiming;
  /** The slot leases this process holds, per person (a lost one stays until its turn gives it back). */
  private readonly held = new Map<string, HeldSession[]>();
  /** Wake-ups of this process's turns waiting for a person's slot, in the order they began to wait. */
  private readonly waiting = new Map<string, Set<() => void>>();
  private listening: Promise<void> | undefined;

  constructor(private readonly options: SharedTurnSlotsOptions) {
    checkTurnsPerPerson(options.perPerson);
    this.perPerson = options.perPerson;
    this.timing = options.timing ?? DEFAULT_LEASE_TIMING;
    const { logger } = options;
    this.leases = new SessionLeases({
      coordination: options.coordination,
      processId: options.processId,
      timing: this.timing,
      logger,
      onLost: (slot) =>
        logger.warn(
          { slot },
          "a turn slot's lease was lost while its turn runs: the person may run one turn over the cap until it ends",
        ),
    });
  }

  /** Take a free slot of `person`'s (one store call per slot tried); false when all are taken. */
  async tryTake(person: string): Promise<boolean> {
    if ((this.held.get(person)?.length ?? 0) >= this.perPerson) return false;
    for (let k = 0; k < this.perPerson; k++) {
      const id = turnSlotId(person, k);
      if (this.leases.holding(id)) continue;
      const lease = await this.leases.take(id);
      if (!lease) continue;
      const mine = this.held.get(person);
      if (mine) mine.push(lease);
      else this.held.set(person, [lease]);
      return true;
    }
    return false;
  }

  /**
   * Take one of `person`'s slots once one is free (see the module header); false when `signal`
   * aborts first (a try under way when it does still counts).
   */
  async take(person: string, signal?: AbortSignal): Promise<boolean> {
    await this.listen();
    const firstMs = this.options.firstRetryMs ?? FIRST_RETRY_MS;
    for (let attempt = 0; signal?.aborted !== true; attempt++) {
      // Listening from before the try on, so a release while it is under way is not missed.
      const waiter = this.waiter(person, signal);
      try {
        if (await this.tryTake(person)) return true;
        await waiter.within(backoffMs(attempt, firstMs, this.timing.renewMs));
      } finally {
        waiter.stop();
      }
    }
    return false;
  }

  /** Release one of `person`'s slot leases in the background, then tell the waiting turns. */
  release(person: string): void {
    const mine = this.held.get(person);
    const lease = mine?.shift();
    if (mine?.length === 0) this.held.delete(person);
    if (lease) void this.giveBack(person, lease);
  }

  private async giveBack(person: string, lease: HeldSession): Promise<void> {
    await lease.release(); // (failures are logged there; the lease then lapses with its TTL)
    this.leases.forgetSession(lease.sessionId);
    this.wake(person);
    const { coordination, processId, logger } = this.options;
    try {
      await coordination.publish(RELEASED_CHANNEL, JSON.stringify({ from: processId, person }));
    } catch (error) {
      logger.warn({ err: error }, "announcing a turn slot's release failed (waiting turns ask again later)");
    }
  }

  /** Subscribe to other processes' releases (once; on failure waiting turns only poll, and the next wait tries again). */
  private listen(): Promise<void> {
    this.listening ??= this.options.coordination
      .subscribe(RELEASED_CHANNEL, (message) => this.heard(message))
      .then(
        () => undefined,
        (error: unknown) => {
          this.listening = undefined;
          this.options.logger.warn({ err: error }, "listening for turn slot releases failed");
        },
      );
    return this.listening;
  }

  private heard(message: string): void {
    let release: { from?: unknown; person?: unknown };
    try {
      release = JSON.parse(message);
    } catch {
      return;
    }
    // This process's own releases woke its waiters already.
    if (release.from !== this.options.processId && typeof release.person === "string")
      this.wake(release.person);
  }

  /** Wake every turn of this process waiting for `person`'s slot, in the order they began to wait. */
  private wake(person: string): void {
    for (const wake of this.waiting.get(person) ?? []) wake();
  }

  /** A waiter for `person`'s slot, woken too when `signal` aborts. */
  private waiter(person: string, signal: AbortSignal | undefined): Waiter {
    let wake: () => void = () => undefined;
    const woken = new Promise<void>((resolve) => {
      wake = resolve;
    });
    const line = this.waiting.get(person) ?? new Set<() => void>();
    line.add(wake);
    this.waiting.set(person, line);
    signal?.addEventListener("abort", wake, { once: true });
    let timer: NodeJS.Timeout | undefined;
    return {
      within: (ms) => {
        timer = setTimeout(wake, ms);
        timer.unref();
        return woken;
      },
      stop: () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", wake);
        line.delete(wake);
        if (line.size === 0 && this.waiting.get(person) === line) this.waiting.delete(person);
      },
    };
  }
}
