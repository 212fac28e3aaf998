/**
 * Wake claims: with several processes on one store, which of them wakes a subscription for a
 * matched message (each may hold it in a batch: one saw it live, another rebuilt it from the
 * shared buffer at start-up). A claim is taken for a few minutes before the hand-over and renewed
 * while that is under way, so a process that dies meanwhile leaves it behind for minutes only,
 * while a slow hand-over does not let it lapse; it is kept for as long as the buffer could
 * re-batch the message once the session accepted the wake-up, and given up when the hand-over
 * failed, so the next try (in any process) takes it again. Claims live in the store's "dedupe"
 * space, whose write-if-absent, compare-and-set and compare-and-delete hold across processes: a
 * renewal extends and a release deletes only the claim it read as this process's, never one
 * another process took after it lapsed.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { HOUR_MS } from "../store/slot-budget.js";
import type { KeyValueSpace } from "../store/store.js";
import { updateByCompareAndSet } from "../store/update-by-compare-and-set.js";

/** How a claim went: this process's now, kept by a delivered wake-up, or being handed over elsewhere. */
export type ClaimResult = "won" | "delivered" | "elsewhere";

/** Claims on matched messages' wake-ups, by key (see the module comment). */
export interface WakeClaims {
  /** Take the claim for a hand-over (a few minutes); an unreadable claim held elsewhere counts as "elsewhere". */
  take(key: string): Promise<ClaimResult>;
  /**
   * The hand-over is still under way: this process's claim lasts a take's time again (retaken when
   * it lapsed and nobody took it meanwhile); false when it is another's or kept (compared as
   * written, so never over a claim another process took after this one's lapsed).
   */
  renew(key: string): Promise<boolean>;
  /** The wake-up was accepted: keep the claim past any age at which the message could be re-batched. */
  keep(key: string): Promise<void>;
  /** The hand-over failed: give this process's claim up (one kept or held elsewhere stays). */
  release(key: string): Promise<void>;
}

/** How long a claim taken for a hand-over lasts: past any hand-over (WakeAccess holds up to 2 min). */
export const WAKE_CLAIM_TAKE_MS = 10 * 60_000;

/** How many renewal writes may lose to other processes' (a claim lapsing and retaken) before it gives up. */
const RENEW_ATTEMPTS = 3;

/** How long a delivered wake-up's claim is kept: past any buffer age at which it could be re-batched. */
const WAKE_CLAIM_KEEP_MS = 8 * 24 * HOUR_MS;

interface ClaimRecord {
  readonly owner: string;
  readonly kept: boolean;
}

const claimSchema: z.ZodType<ClaimRecord> = z.object({ owner: z.string().min(1), kept: z.boolean() });

/** Wake claims in a store space shared by the processes (the "dedupe" space). */
export class StoreWakeClaims implements WakeClaims {
  /** This instance's claims: a claim it could not release is its own again on the next try. */
  private readonly owner = randomUUID();
  /** This instance's claim while a hand-over is under way: what a take and a renewal write. */
  private readonly taken: ClaimRecord = { owner: this.owner, kept: false };

  constructor(private readonly space: KeyValueSpace) {}

  async take(key: string): Promise<ClaimResult> {
    if (await this.space.setIfAbsent(storeKey(key), this.taken, WAKE_CLAIM_TAKE_MS)) return "won";
    const held = parsed(await this.space.get(storeKey(key)));
    if (this.isTaken(held)) return "won";
    return held?.kept ? "delivered" : "elsewhere";
  }

  /**
   * Extend the claim only over the claim read (compare-and-set, keeping a take's TTL), so a claim
   * that lapsed after the read and was taken by another process is never overwritten; one lapsed
   * and untaken is retaken. A write lost to another process's reads the claim again.
   */
  async renew(key: string): Promise<boolean> {
    const renewed = await updateByCompareAndSet(
      this.space,
      storeKey(key),
      (stored) => (stored === undefined || this.isTaken(parsed(stored)) ? this.taken : undefined),
      { attempts: RENEW_ATTEMPTS, ttlMs: WAKE_CLAIM_TAKE_MS },
    );
    return renewed.outcome === "updated";
  }

  async keep(key: string): Promise<void> {
    const record: ClaimRecord = { owner: this.owner, kept: true };
    await this.space.set(storeKey(key), record, WAKE_CLAIM_KEEP_MS);
  }

  async release(key: string): Promise<void> {
    const stored = await this.space.get(storeKey(key));
    if (this.isTaken(parsed(stored))) await this.space.deleteIf(storeKey(key), stored);
  }

  /** Whether a stored claim is this instance's, taken for a hand-over and not kept. */
  private isTaken(held: ClaimRecord | undefined): boolean {
    return held?.owner === this.owner && !held.kept;
  }
}

/** A stored claim, or undefined when none is stored or it cannot be read. */
function parsed(stored: unknown): ClaimRecord | undefined {
  const result = claimSchema.safeParse(stored);
  return result.success ? result.data : undefined;
}

const storeKey = (key: string): string => `wake-claim:${key}`;
