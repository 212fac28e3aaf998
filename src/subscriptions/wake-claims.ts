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
 * this process's claim, for a take's time, while it still holds exactly what was read (the store's
 * compare-and-set over the row's text), and reports it: left in place it would hold the message's
 * wake-up back for good.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { HOUR_MS } from "../store/slot-budget.js";
import { type KeyValueSpace, readRows } from "../store/store.js";
import { UnreadableRow } from "../store/stored-row.js";
import { updateByCompareAndSet } from "../store/update-by-compare-and-set.js";

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

/**
 * How many writes of a take may lose to other processes' before it finds the claim elsewhere: its
 * write-if-absent, then one over what it read (nothing, after a release; a claim that cannot be
 * read), then one more over what it read again.
 */
const TAKE_ATTEMPTS = 3;

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

  /** `onError` hears of each stored claim that could not be read and was replaced. */
  constructor(
    private readonly space: KeyValueSpace,
    private readonly onError: (error: unknown, context: string) => void,
  ) {}

  async take(key: string): Promise<ClaimResult> {
    // Its first write is a write-if-absent, without a read: most claims are taken so.
    const taken = await updateByCompareAndSet(
      this.space,
      storeKey(key),
      (stored) => (stored === undefined || parsed(stored) === undefined ? this.taken : undefined),
      {
        attempts: TAKE_ATTEMPTS,
        ttlMs: WAKE_CLAIM_TAKE_MS,
        believed: { value: undefined },
        readsUnreadable: true,
      },
    );
    switch (taken.outcome) {
      case "updated":
        if (taken.replaced !== undefined) this.reportReplaced(key, taken.replaced);
        return "won";
      case "unchanged": {
        const held = parsed(taken.current);
        if (this.isTaken(held)) return "won";
        return held?.kept ? "delivered" : "elsewhere";
      }
      case "gave-up":
        return "elsewhere";
    }
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
      // A claim that cannot be read is never this process's: left to a take.
      { attempts: RENEW_ATTEMPTS, ttlMs: WAKE_CLAIM_TAKE_MS, readsUnreadable: true },
    );
    return renewed.outcome === "updated";
  }

  async keep(key: string): Promise<void> {
    const record: ClaimRecord = { owner: this.owner, kept: true };
    await this.space.set(storeKey(key), record, WAKE_CLAIM_KEEP_MS);
  }

  async release(key: string): Promise<void> {
    const [read] = await readRows(this.space, [storeKey(key)]);
    if (read !== undefined && "value" in read && this.isTaken(parsed(read.value)))
      await this.space.deleteIf(storeKey(key), read.expected);
  }

  /**
   * Report a stored claim that could not be read, `replaced` by this process's: an UnreadableRow,
   * or a value that is not a claim. Two processes replacing it at once cannot both: the store's
   * compare-and-set lets one write over the row read.
   */
  private reportReplaced(key: string, replaced: unknown): void {
    const reason = replaced instanceof UnreadableRow ? `it ${replaced.reason}` : "it is not a wake claim";
    this.onError(
      new Error(`wake claim ${key} could not be read (${reason}): replaced by this process's claim`),
      `taking wake claim ${key}`,
    );
  }

  /** Whether a stored claim is this instance's, taken for a hand-over and not kept. */
  private isTaken(held: ClaimRecord | undefined): boolean {
    return held?.owner === this.owner && !held.kept;
  }
}

/** A stored claim, or undefined when none is stored or it cannot be read (an UnreadableRow among them). */
function parsed(stored: unknown): ClaimRecord | undefined {
  const result = claimSchema.safeParse(stored);
  return result.success ? result.data : undefined;
}

const storeKey = (key: string): string => `wake-claim:${key}`;
