/**
 * SessionLeases: the per-session lease when several processes share one store. A process takes a
 * session's lease (with a fencing number) before it runs the session's turns or changes its
 * record, renews it by heartbeat while it holds it, and releases it when its pump ends. When a
 * renewal fails the lease is lost — another process may already have taken the session over —
 * and the holder is told at once, so it stops its turn instead of running tools twice. A holder
 * also gives a lease up by its own clock when no renewal confirmed it for nearly a TTL, whatever
 * its renewal calls do (one that hangs on a silent link neither succeeds nor fails): it has
 * stopped before the lease can lapse in the store and another process take the session. The
 * fence of each held session is what its turn-state writes carry (see fenced-space.ts).
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "pino";
import {
  type Coordination,
  type FenceRef,
  type LeaseGrant,
  tokenOwner,
} from "../store/coordination/coordination.js";

/** Lease timing: a lease lapses `ttlMs` after its last renewal; renewals run every `renewMs`. */
export interface LeaseTiming {
  readonly ttlMs: number;
  readonly renewMs: number;
}

/** The default: lapses within 15 s of a holder's death, renewed every 5 s. */
export const DEFAULT_LEASE_TIMING: LeaseTiming = Object.freeze({ ttlMs: 15_000, renewMs: 5_000 });

/**
 * How long before a TTL runs out, counted from its last confirmation, a holder gives its lease up
 * (a fifth of the TTL, at most 3 s). The confirmation time is taken before the call that set the
 * TTL was sent, so the store's expiry, counted from when it ran the call, comes no sooner than a
 * TTL after it: the margin is for the holder itself — a deadline timer that fires late on a busy
 * event loop, and the abort reaching its tools — and for a lease adopted from an offer, whose TTL
 * counts from when the grant arrived (a round trip late). The abort does not end every tool at
 * once: a shell command it stops gets run_command's kill grace (`killGraceMs`, 2 s by default)
 * between SIGTERM and SIGKILL, so at the default timing the margin covers that grace with room to
 * spare — a command must be dead before another process may take the session and run its turn.
 * Short TTLs (tests) get a fifth of theirs, leaving most of the TTL for the renewals.
 */
export function lossMarginMs(timing: LeaseTiming): number {
  return Math.min(3_000, timing.ttlMs / 5);
}

/**
 * The waits of a retry loop that lasts until a lease another process holds lapses: `firstMs`
 * first, then doubling up to the renewal interval (each try costs Redis calls), none past
 * `withinMs` from now. Each call of the result waits once; it answers false, without waiting,
 * once that time is up.
 */
export function waitsUntilLapse(
  timing: LeaseTiming,
  firstMs: number,
  withinMs: number,
): () => Promise<boolean> {
  const deadline = Date.now() + withinMs;
  let wait = firstMs;
  return async () => {
    const left = deadline - Date.now();
    if (left <= 0) return false;
    await sleep(Math.min(wait, left));
    wait = Math.min(wait * 2, timing.renewMs);
    return true;
  };
}

/** A session lease this process holds. */
export interface HeldSession {
  readonly sessionId: string;
  readonly fence: FenceRef;
  /** Aborted when the lease is lost (a renewal failed, or none confirmed it in time) or released. */
  readonly signal: AbortSignal;
  /**
   * Give the lease up (once; later calls are ignored); resolves once released in the store, with
   * how many items wait in `queue` then (0 without a queue, or when the lease was lost already).
   */
  release(queue?: string): Promise<number>;
}

interface Entry extends HeldSession {
  readonly token: string;
  /**
   * When the lease was last confirmed (taken or renewed): `performance.now()` just before the
   * call that confirmed it was sent. Monotonic, so a wall-clock step cannot stretch the deadline.
   */
  confirmedAt: number;
  readonly controller: AbortController;
  /** The renewal heartbeat. */
  readonly timer: NodeJS.Timeout;
  /** Loses the lease at `confirmedAt` + TTL − margin; re-armed at each confirmed renewal. */
  deadline: NodeJS.Timeout | undefined;
}

export interface SessionLeasesOptions {
  readonly coordination: Coordination;
  /** Names this process in its lease tokens (no "/"). */
  readonly processId: string;
  readonly timing: LeaseTiming;
  readonly logger: Logger;
  /** Told when a held lease is lost: a renewal failed, or none confirmed it within the TTL. */
  readonly onLost: (sessionId: string) => void;
}

/** Store key of a session's lease. */
export const sessionLeaseKey = (sessionId: string) => `session:${sessionId}`;

/** The session leases of this process. */
export class SessionLeases {
  private readonly held = new Map<string, Entry>();
  /**
   * The fence this process writes each session under: the held lease's, and once that lease is
   * lost or released still its fence — a late write is then refused if anyone took the session
   * since, never let through unfenced — until this process takes the session again.
   */
  private readonly fences = new Map<string, FenceRef>();
  /** The fence each session's in-memory state was last current with, as seen by this process. */
  private readonly lastFence = new Map<string, number>();
  private heartbeatFailed = false;

  constructor(private readonly options: SessionLeasesOptions) {}

  get processId(): string {
    return this.options.processId;
  }

  /**
   * Take the session's lease; undefined when another holder has it (or this process already does).
   * With `after`, only as the next holder after that fence (no process held it between): a grant
   * of a later fence is given back unheld, so the fence this process remembers for the session —
   * the one a turn here writes under — stays `after`, and those writes stay refused.
   */
  async take(sessionId: string, after?: FenceRef): Promise<HeldSession | undefined> {
    if (this.held.has(sessionId)) return undefined;
    const { coordination, timing, processId } = this.options;
    const asked = performance.now();
    const key = sessionLeaseKey(sessionId);
    const grant = await coordination.acquire(key, timing.ttlMs, processId);
    if (grant && after && grant.fence !== after.fence + 1) {
      await coordination.release(key, grant.token);
      return undefined;
    }
    return grant && this.hold(sessionId, grant, asked);
  }

  /** The terms to take the session's lease on in another coordination step (an offer). */
  termsFor(sessionId: string): { key: string; ttlMs: number; owner: string } {
    return {
      key: sessionLeaseKey(sessionId),
      ttlMs: this.options.timing.ttlMs,
      owner: this.options.processId,
    };
  }

  /**
   * Hold a lease this process was granted (by `take`, or by an offer that took it): renewed from
   * now on. Undefined — and the grant given back — when this process holds the session already.
   */
  adopt(sessionId: string, grant: LeaseGrant): Promise<HeldSession | undefined> {
    return this.hold(sessionId, grant, performance.now());
  }

  /** `adopt`, for a grant whose TTL counts from no earlier than `confirmedAt` (performance.now()). */
  private async hold(
    sessionId: string,
    grant: LeaseGrant,
    confirmedAt: number,
  ): Promise<HeldSession | undefined> {
    const key = sessionLeaseKey(sessionId);
    if (this.held.has(sessionId)) {
      await this.options.coordination.release(key, grant.token);
      return undefined;
    }
    const controller = new AbortController();
    const timer = setInterval(() => void this.renew(sessionId), this.options.timing.renewMs);
    timer.unref();
    let released: Promise<number> | undefined;
    const entry: Entry = {
      sessionId,
      token: grant.token,
      fence: { key, fence: grant.fence },
      controller,
      confirmedAt,
      signal: controller.signal,
      timer,
      deadline: undefined,
      release: (queue?: string) => {
        released ??= this.drop(entry, queue);
        return released;
      },
    };
    this.held.set(sessionId, entry);
    this.fences.set(sessionId, entry.fence);
    this.armDeadline(entry);
    return entry;
  }

  /**
   * Forget what this process remembers of a session it does not hold (its last fences): its copy
   * left memory, so no late write can follow, and a later copy is loaded from the store anyway.
   */
  forgetSession(sessionId: string): void {
    if (this.held.has(sessionId)) return;
    this.fences.delete(sessionId);
    this.lastFence.delete(sessionId);
  }

  /** The lease this process holds on the session, if any. */
  holding(sessionId: string): HeldSession | undefined {
    return this.held.get(sessionId);
  }

  /** The fence this process's writes of the session carry, if it ever held its lease. */
  fenceOf(sessionId: string): FenceRef | undefined {
    return this.fences.get(sessionId);
  }

  /** The process holding the session's lease now, when another one does. */
  async holderElsewhere(sessionId: string): Promise<string | undefined> {
    if (this.held.has(sessionId)) return undefined;
    const token = await this.options.coordination.holder(sessionLeaseKey(sessionId));
    const owner = token === undefined ? undefined : tokenOwner(token);
    return owner === this.options.processId ? undefined : owner;
  }

  /**
   * Whether this process's copy of the session may be out of date under `held`: true unless the
   * previous lease on it was this process's own, or there was none (the first lease on a session:
   * nothing was written under a lease before it, so the copy is the record as created).
   */
  mayBeStale(held: HeldSession): boolean {
    if (held.fence.fence === 1) return false;
    return this.lastFence.get(held.sessionId) !== held.fence.fence - 1;
  }

  /** False once a renewal failed for a reason other than a lost lease (Redis unreachable), until one succeeds. */
  get healthy(): boolean {
    return !this.heartbeatFailed;
  }

  /** How many session leases this process holds. */
  get count(): number {
    return this.held.size;
  }

  /** Release every lease (shutdown): others may take the sessions over at once. */
  async releaseAll(): Promise<void> {
    await Promise.allSettled([...this.held.values()].map((entry) => entry.release()));
  }

  private async renew(sessionId: string): Promise<void> {
    const entry = this.held.get(sessionId);
    if (!entry) return;
    const started = performance.now();
    try {
      const { ttlMs } = this.options.timing;
      const kept = await this.options.coordination.renew(entry.fence.key, entry.token, ttlMs);
      this.heartbeatFailed = false;
      if (!kept) this.lose(entry);
      else if (this.held.get(sessionId) === entry && started > entry.confirmedAt) {
        // (A slow renewal that ends after a later one confirms nothing newer.)
        entry.confirmedAt = started;
        this.armDeadline(entry);
      }
    } catch (error) {
      this.heartbeatFailed = true;
      this.options.logger.warn({ err: error, sessionId }, "renewing a session lease failed");
      // Unconfirmed for (nearly) a whole TTL, the deadline timer gives it up (armDeadline).
    }
  }

  /** When the holder gives the lease up unless a renewal confirms it first (performance.now()). */
  private deadlineOf(entry: Entry): number {
    const { timing } = this.options;
    return entry.confirmedAt + timing.ttlMs - lossMarginMs(timing);
  }

  /**
   * Lose the lease at its deadline, whatever pending renewals do: one that hangs (a silent link
   * answers nothing, and fails nothing) must not keep a turn running past the lease.
   */
  private armDeadline(entry: Entry): void {
    clearTimeout(entry.deadline);
    const wait = Math.max(0, this.deadlineOf(entry) - performance.now());
    entry.deadline = setTimeout(() => {
      if (this.held.get(entry.sessionId) !== entry) return;
      this.options.logger.warn(
        { sessionId: entry.sessionId },
        "no renewal confirmed a session lease in time: giving it up",
      );
      this.lose(entry);
    }, wait);
    entry.deadline.unref();
  }

  private lose(entry: Entry): void {
    if (this.held.get(entry.sessionId) !== entry) return;
    this.options.logger.warn({ sessionId: entry.sessionId, fence: entry.fence.fence }, "session lease lost");
    this.forget(entry);
    this.options.onLost(entry.sessionId);
  }

  private async drop(entry: Entry, queue: string | undefined): Promise<number> {
    if (this.held.get(entry.sessionId) !== entry) return 0;
    this.forget(entry);
    this.lastFence.set(entry.sessionId, entry.fence.fence);
    const { coordination } = this.options;
    try {
      if (queue === undefined) {
        await coordination.release(entry.fence.key, entry.token);
        return 0;
      }
      return Math.max(0, (await coordination.releaseAndCount(entry.fence.key, entry.token, queue)).waiting);
    } catch (error) {
      this.options.logger.warn(
        { err: error, sessionId: entry.sessionId },
        "releasing a session lease failed",
      );
      return 0;
    }
  }

  private forget(entry: Entry): void {
    clearInterval(entry.timer);
    clearTimeout(entry.deadline);
    this.held.delete(entry.sessionId);
    entry.controller.abort();
  }
}
