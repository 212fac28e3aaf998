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
 * another process took after it lapsed. A stored claim that cannot be read (a row that is not
 * JSON, holds no value, or holds one that is not a claim: corrupt, or written by something else)
 * says neither who holds it nor until when — and may never expire — so a take replaces it with
 * this process's claim, for a take's time, and reports it: left in place it would hold the
 * message's wake-up back for good.
 */
import { randomUUID } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { z } from "zod";
import { HOUR_MS } from "../store/slot-budget.js";
import type { KeyValueSpace } from "../store/store.js";
import { updateByCompareAndSet } from "../store/update-by-compare-and-set.js";
import { StoredDataError } from "../store/versioned.js";

/** How a claim went: this process's now, kept by a delivered wake-up, or being handed over elsewhere. */
export type ClaimResult = "won" | "delivered" | "elsewhere";

/** Claims on matched messages' wake-ups, by key (see the module comment). */
export interface WakeClaims {
  /**
   * Take the claim for a hand-over (a few minutes): "won" also over a stored claim that cannot be
   * read, which is replaced (and reported); "elsewhere" when another process changed that one first.
   */
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

/** A stored claim that cannot be read: why, and its value when the store could hand one back (JSON). */
interface Unreadable {
  readonly reason: string;
  readonly value?: unknown;
}

/** A claim's key as read: the claim, nothing (undefined), or what cannot be read there. */
type StoredClaim = { readonly claim: ClaimRecord } | { readonly unreadable: Unreadable } | undefined;

/** Wake claims in a store space shared by the processes (the "dedupe" space). */
export class StoreWakeClaims implements WakeClaims {
  /** This instance's claims: a claim it could not release is its own again on the next try. */
  private readonly owner = randomUUID();
  /** This instance's claim while a hand-over is under way: what a take and a renewal write. */
  private readonly taken: ClaimRecord = { owner: this.owner, kept: false };

  /** `onError` hears of each stored claim that could not be read and was replaced. */
  constructor(
    private readonly space: KeyValueSpace,
    private readonly onError: (error: unknown, context: string) => void,
  ) {}

  async take(key: string): Promise<ClaimResult> {
    if (await this.takeIfAbsent(key)) return "won";
    let stored = await this.readStored(key);
    // Nothing read where the take found a row: it went since (released, lapsed), or it holds no
    // value (`{"v":1}`, `null`), which the store reads as nothing while a take still finds it.
    if (stored === undefined) {
      if (await this.takeIfAbsent(key)) return "won";
      stored = (await this.readStored(key)) ?? { unreadable: { reason: "it holds no value" } };
    }
    if ("unreadable" in stored)
      return (await this.replaceUnreadable(key, stored.unreadable)) ? "won" : "elsewhere";
    if (this.isTaken(stored.claim)) return "won";
    return stored.claim.kept ? "delivered" : "elsewhere";
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

  /** Write this process's claim, for a take's time, if none is stored; true when it did. */
  private takeIfAbsent(key: string): Promise<boolean> {
    return this.space.setIfAbsent(storeKey(key), this.taken, WAKE_CLAIM_TAKE_MS);
  }

  /** The claim stored under `key` as read, nothing (undefined), or what cannot be read there. */
  private async readStored(key: string): Promise<StoredClaim> {
    let value: unknown;
    try {
      value = await this.space.get(storeKey(key));
    } catch (error) {
      // A row that is not JSON: the store cannot hand its value back to be compared.
      if (error instanceof StoredDataError) return { unreadable: { reason: error.message } };
      throw error;
    }
    if (value === undefined) return undefined;
    const checked = claimSchema.safeParse(value);
    return checked.success
      ? { claim: checked.data }
      : { unreadable: { reason: "it is not a wake claim", value } };
  }

  /**
   * Replace a stored claim that cannot be read with this process's, for a take's time, and report
   * it; false when another process changed it first. One whose value was read is replaced while it
   * is stored as read (compare-and-set); a row the store cannot compare (not JSON, no value, or
   * JSON in other text than the store writes: spaced, `"expires":null`) is deleted, once read
   * again unchanged, and this process's claim written if none was meanwhile. Two processes doing
   * so at the same moment may then both wake for the message: each reports it.
   */
  private async replaceUnreadable(key: string, unreadable: Unreadable): Promise<boolean> {
    const { value } = unreadable;
    let replaced: boolean;
    if (value === undefined) replaced = await this.overwrite(key);
    else
      replaced =
        (await this.space.replaceIf(storeKey(key), value, this.taken, WAKE_CLAIM_TAKE_MS)) ||
        // The compare missed: the row changed since the read, or its text is not the store's.
        ((await this.holdsUnreadable(key, value)) && (await this.overwrite(key)));
    if (replaced)
      this.onError(
        new Error(
          `wake claim ${key} could not be read (${unreadable.reason}): replaced by this process's claim`,
        ),
        `taking wake claim ${key}`,
      );
    return replaced;
  }

  /** Whether `key` still holds the unreadable `value` a take read there (read again, compared as values). */
  private async holdsUnreadable(key: string, value: unknown): Promise<boolean> {
    const stored = await this.readStored(key);
    return (
      stored !== undefined && "unreadable" in stored && isDeepStrictEqual(stored.unreadable.value, value)
    );
  }

  /** Delete the claim under `key`, whatever it holds, and take it if none was written meanwhile. */
  private async overwrite(key: string): Promise<boolean> {
    await this.space.delete(storeKey(key));
    return this.takeIfAbsent(key);
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
