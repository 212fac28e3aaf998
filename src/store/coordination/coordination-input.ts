/**
 * Coordination input checks: what both coordinations (Redis and in-process) refuse, with the same
 * words, before they change anything — a store key or entry the store itself would refuse
 * (keyv-space.ts checkKey / checkEntry: a key over 200 characters, a lone surrogate that Redis would
 * fold into another key, an undefined value, a TTL of 1.5 ms), a lease or claim TTL that is not a
 * positive whole number of milliseconds, a queue trim count that is not a whole number. Each call is
 * checked whole first: Redis does not roll a script back when one of its commands fails, and the
 * in-process coordination writes space by space, so a check failing partway would leave half of a
 * write meant as one unit (or an offer's claims written without its lease, and a retry taken for a
 * duplicate).
 */
import { checkEntry, checkKey } from "../keyv-space.js";
import type { FencedWrite, Offer, StoreWrite } from "./coordination.js";

/** Throws unless `ttlMs` for the lease or claim `key` is a positive whole number of milliseconds. */
export function checkLeaseTtl(key: string, ttlMs: number): void {
  if (!(Number.isSafeInteger(ttlMs) && ttlMs > 0)) {
    throw new Error(`coordination: ttlMs for ${key} must be a positive whole number of milliseconds`);
  }
}

/** Throws unless the store would accept every one of `writes`. */
export function checkStoreWrites(writes: readonly StoreWrite[]): void {
  for (const { namespace, key, value, ttlMs } of writes) checkEntry(namespace, key, value, ttlMs);
}

/** Throws unless every one of `writes` can be applied: store entries and keys as the store wants them, whole trim counts. */
export function checkFencedWrites(writes: readonly FencedWrite[]): void {
  for (const write of writes) {
    if (write.op === "set") checkEntry(write.namespace, write.key, write.value, write.ttlMs);
    else if (write.op === "delete") checkKey(write.namespace, write.key);
    else if (write.op === "trim" && !(Number.isSafeInteger(write.count) && write.count >= 0)) {
      throw new Error(`coordination: trim count for queue ${write.queue} must be a whole number, 0 or more`);
    }
  }
}

/** Throws unless the offer's claims are store entries the store accepts and its lease TTL is valid. */
export function checkOffer(offer: Offer): void {
  checkStoreWrites(offer.claims);
  checkLeaseTtl(offer.lease.key, offer.lease.ttlMs);
}
