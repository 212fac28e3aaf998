/**
 * Byte budgets: "at most N bytes per window" for one key (a person's uploads per rolling day),
 * counted in the store and shared by every process on it — the sibling of slot-budget.ts, on the
 * same pattern, for amounts that vary per use.
 *
 * A key's window holds at most `maxClaims` claims, keys `<key>:<k>` for k in 0..maxClaims-1 in the
 * given space; one use claims a free slot with a write-if-absent (atomic across processes on
 * Redis, SQLite and Postgres: KeyvSpace.setIfAbsent) that holds its bytes and its time and expires
 * after the window. What the key has used is the sum of the claims read back. A claim is checked
 * before it is written (the claims read plus it within the limit) and again after (all claims
 * read back, its own included, within the limit — else it is taken back and refused): of claims
 * that race, the last to read back sees all the others, so together they never pass the limit;
 * two racing claims may both be refused where one would have fit, which errs on the safe side.
 * A claim's bytes may be settled later (a download whose real size was unknown when it began)
 * or released (one that saved nothing). Kept across a restart, like everything in the store.
 */
import { z } from "zod";
import { getAll, type KeyValueSpace } from "./store.js";
import { fromVersioned, toVersioned } from "./versioned.js";

/** A day in milliseconds: the default window. */
export const DAY_MS = 86_400_000;

/** The default most claims a key holds in one window (uses, not bytes). */
export const DEFAULT_MAX_CLAIMS = 500;

/** The stored record of one claim. */
export const BYTE_CLAIM_KIND = "byte-claim";
const claimSchema = z.strictObject({
  /** The bytes claimed (settled to the real size once known). */
  bytes: z.number().int().nonnegative(),
  /** When it was claimed, ms since the epoch: it counts until `at + window`. */
  at: z.number(),
});
export type ByteClaim = z.infer<typeof claimSchema>;

/** A claim held: `settle` sets its bytes (same expiry), `release` gives it back. */
export interface ByteHold {
  settle(bytes: number): Promise<void>;
  release(): Promise<void>;
}

/** What `take` got: the bytes, or a refusal with what the key has used and when room frees. */
export type ByteTake =
  | ({ readonly ok: true } & ByteHold)
  | {
      readonly ok: false;
      /** Bytes the key's live claims hold. */
      readonly used: number;
      /** Whether the refusal is for the count of claims (maxClaims) rather than the bytes. */
      readonly tooMany: boolean;
      /** When enough claims end for this use to fit (ms since the epoch), when that is known. */
      readonly freesAt: number | undefined;
    };

export interface ByteBudget {
  /** The window claims count in, in ms. */
  readonly windowMs: number;
  /** The most claims a key holds in one window. */
  readonly maxClaims: number;
  /**
   * Take `bytes` of `key`'s `limit` now. Rejects when the count cannot be read or written, or a
   * stored claim cannot be read (the caller decides whether that refuses).
   */
  take(key: string, bytes: number, limit: number): Promise<ByteTake>;
}

/** The store key of `key`'s claim `slot`. */
export const byteClaimKey = (key: string, slot: number): string => `${key}:${slot}`;

export interface StoreByteBudgetOptions {
  /** How long a claim counts (default a day). */
  readonly windowMs?: number;
  /** The most claims a key holds in one window (default DEFAULT_MAX_CLAIMS). */
  readonly maxClaims?: number;
  /** The clock claims are written and read with (default Date.now). */
  readonly now?: () => number;
}

/** The budget counted in `space`, shared by every process on the store (see the module header). */
export function storeByteBudget(space: KeyValueSpace, options: StoreByteBudgetOptions = {}): ByteBudget {
  const windowMs = options.windowMs ?? DAY_MS;
  const maxClaims = options.maxClaims ?? DEFAULT_MAX_CLAIMS;
  const now = options.now ?? Date.now;

  /** Each slot's live claim (undefined where free or ended) and whether it is free to claim. */
  async function read(keys: readonly string[]): Promise<Array<{ claim?: ByteClaim; free: boolean }>> {
    const at = now();
    return (await getAll<unknown>(space, keys)).map((raw, slot) => {
      if (raw === undefined) return { free: true };
      const claim = fromVersioned(raw, { kind: BYTE_CLAIM_KIND, schema: claimSchema, where: keys[slot] });
      // Ended by the clock but not yet expired by the store: no longer counted, not yet free.
      return claim.at + windowMs > at ? { claim, free: false } : { free: false };
    });
  }

  const usedOf = (claims: ReadonlyArray<{ claim?: ByteClaim }>): number =>
    claims.reduce((sum, { claim }) => sum + (claim?.bytes ?? 0), 0);

  /** When the oldest claims have ended enough for `bytes` more to fit under `limit`. */
  function freesAt(claims: ReadonlyArray<{ claim?: ByteClaim }>, bytes: number, limit: number) {
    if (bytes > limit) return undefined;
    const live = claims.flatMap(({ claim }) => (claim ? [claim] : [])).sort((a, b) => a.at - b.at);
    let used = usedOf(claims);
    for (const claim of live) {
      used -= claim.bytes;
      if (used + bytes <= limit) return claim.at + windowMs;
    }
    return undefined;
  }

  return {
    windowMs,
    maxClaims,
    async take(key, bytes, limit) {
      const keys = Array.from({ length: maxClaims }, (_, slot) => byteClaimKey(key, slot));
      const held = await read(keys);
      const used = usedOf(held);
      if (used + bytes > limit)
        return { ok: false, used, tooMany: false, freesAt: freesAt(held, bytes, limit) };
      const at = now();
      for (const [slot, slotName] of keys.entries()) {
        if (!held[slot]?.free) continue;
        if (!(await space.setIfAbsent(slotName, toVersioned(BYTE_CLAIM_KIND, { bytes, at }), windowMs)))
          continue;
        // Read back with every claim made meanwhile: over the limit, this one is taken back.
        const after = await read(keys);
        if (usedOf(after) > limit) {
          await space.delete(slotName);
          const others = after.map((entry, index) => (index === slot ? { free: true } : entry));
          return { ok: false, used: usedOf(others), tooMany: false, freesAt: freesAt(others, bytes, limit) };
        }
        return {
          ok: true,
          settle: async (real) => {
            const left = at + windowMs - now();
            if (left > 0) await space.set(slotName, toVersioned(BYTE_CLAIM_KIND, { bytes: real, at }), left);
          },
          release: async () => {
            await space.delete(slotName);
          },
        };
      }
      const times = held.flatMap(({ claim }) => (claim ? [claim.at] : []));
      return {
        ok: false,
        used,
        tooMany: true,
        freesAt: times.length > 0 ? Math.min(...times) + windowMs : undefined,
      };
    },
  };
}
