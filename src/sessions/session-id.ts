/**
 * Session ids: time-ordered, so ids sort by when their session began. Every store key of a session
 * (its record, history pages, journal) starts with its id; with random ids each new session's
 * keys landed on random pages of the store's index — one more page rewritten per key and commit —
 * while ids that grow with time keep new keys together at the index's end. The random part keeps
 * ids unguessable and unique across processes.
 */
import { randomUUID } from "node:crypto";

/**
 * A new session id: the milliseconds since 1970 in base 36 (8 characters until 2059), then 16
 * random hex digits (from randomUUID, which draws on a cached entropy pool: no system call per id).
 */
export function newSessionId(now: number = Date.now()): string {
  const hex = randomUUID().replace(/-/g, ""); // 32 hex digits; the 13th is the UUID version, not random
  return `${now.toString(36).padStart(8, "0")}${hex.slice(0, 12)}${hex.slice(13, 17)}`;
}
