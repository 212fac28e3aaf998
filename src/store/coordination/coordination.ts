/**
 * Coordination: what several Coworker processes on one store agree through — per-key leases with
 * fencing numbers, writes refused when their fence is stale, shared FIFO queues, pub/sub channels,
 * one-time claims and shared sets (indexes). Redis provides it across processes; the in-process
 * implementation gives the single-process default (SQLite, Postgres, memory) the same contract.
 */
import { randomUUID } from "node:crypto";
import type { StoreHealth, StoreNamespace } from "../store.js";

/** A lease just taken: the token proves ownership, the fence orders holders (strictly increasing per key). */
export interface LeaseGrant {
  readonly token: string;
  readonly fence: number;
}

/** The lease a fenced write is made under: refused once a later holder took `key`. */
export interface FenceRef {
  readonly key: string;
  readonly fence: number;
}

/** A store key written with a value (and optionally a TTL), as a coordination operation writes it. */
export interface StoreWrite {
  readonly namespace: StoreNamespace;
  readonly key: string;
  readonly value: unknown;
  readonly ttlMs?: number;
}

/**
 * One write made under a fence: a store key set or deleted, the first `count` items of a shared
 * queue removed (taken into the state the same write saves), the first item of a shared queue
 * equal to `item` removed (refused: it is never taken), or a shared set's member added or removed
 * (an index kept in step with that state).
 */
export type FencedWrite =
  | ({ readonly op: "set" } & StoreWrite)
  | { readonly op: "delete"; readonly namespace: StoreNamespace; readonly key: string }
  | { readonly op: "trim"; readonly queue: string; readonly count: number }
  | { readonly op: "remove-item"; readonly queue: string; readonly item: string }
  | { readonly op: "add-member" | "remove-member"; readonly set: string; readonly member: string };

/** What `offer` puts in and asks for (see Coordination.offer). */
export interface Offer {
  /** The queue the item joins, at its tail. */
  readonly queue: string;
  readonly item: string;
  /**
   * Store keys that mark the item as taken (its delivery ids): when any of them exists the item
   * is a duplicate and nothing happens; otherwise they are written with it.
   */
  readonly claims: readonly StoreWrite[];
  /** A shared set the item's owner joins (the index of sessions with work). */
  readonly index: { readonly set: string; readonly member: string };
  /** The lease to take for the caller when nobody holds it. */
  readonly lease: { readonly key: string; readonly ttlMs: number; readonly owner: string };
}

/** How an offer went: a duplicate (nothing done), queued with the lease now the caller's (and the queue's items), or queued while someone holds the lease. */
export type OfferOutcome =
  | { readonly status: "duplicate" }
  | { readonly status: "taken"; readonly grant: LeaseGrant; readonly items: readonly string[] }
  | { readonly status: "queued"; readonly holder: string | undefined };

/** Thrown by writers whose fence was refused: a later lease holder owns the state now. */
export class StaleFenceError extends Error {
  constructor(readonly fence: FenceRef) {
    super(`write refused: lease ${fence.key} was taken by a later holder than fence ${fence.fence}`);
    this.name = "StaleFenceError";
  }
}

/** A new lease token, naming its owner when given. */
export function newLeaseToken(owner?: string): string {
  return owner === undefined ? randomUUID() : `${owner}/${randomUUID()}`;
}

/** The owner named in a lease token (see `acquire`), if any. */
export function tokenOwner(token: string): string | undefined {
  const slash = token.lastIndexOf("/");
  return slash < 0 ? undefined : token.slice(0, slash);
}

/** Stops a subscription; resolves once no more messages are delivered to its listener. */
export type Unsubscribe = () => Promise<void>;

/** The coordination primitives. Keys and channel names are plain strings; implementations prefix them. */
export interface Coordination {
  /** True when other processes may share this coordination (Redis); false for the in-process one. */
  readonly distributed: boolean;
  /**
   * Take `key` for `ttlMs` unless someone holds it; undefined when held. `owner` (no "/") is
   * written into the token, so others can tell who holds the key (`tokenOwner`).
   */
  acquire(key: string, ttlMs: number, owner?: string): Promise<LeaseGrant | undefined>;
  /** Extend the lease to `ttlMs` from now; false when `token` no longer holds it. */
  renew(key: string, token: string, ttlMs: number): Promise<boolean>;
  /** Give the lease up; false when `token` no longer held it. */
  release(key: string, token: string): Promise<boolean>;
  /** The token holding `key` now, if any. */
  holder(key: string): Promise<string | undefined>;
  /** The latest fence handed out for `key` (0 before the first acquisition). */
  currentFence(key: string): Promise<number>;
  /**
   * Apply `writes` (in order, as one unit) only while `fence` is the latest fence of its key;
   * false (nothing written) when a later holder has taken the lease.
   */
  fencedWrite(fence: FenceRef, writes: readonly FencedWrite[]): Promise<boolean>;
  /**
   * Write the store key `first` only when it is absent, and `rest` with it, in one atomic step
   * (a thread's index entry and the record it names); true when this call wrote them.
   */
  insertIfAbsent(first: StoreWrite, rest: readonly StoreWrite[]): Promise<boolean>;
  /**
   * In one atomic step: unless one of `claims` exists (a duplicate: nothing happens), write the
   * claims, add the index member, append the item to the queue, and take the lease when nobody
   * holds it — then the queue's items come back with the grant (one round trip for "take this
   * input, and the session if it is free").
   */
  offer(offer: Offer): Promise<OfferOutcome>;
  /** The items of a queue from position `from` (0 = the oldest) to its tail, left in place. */
  items(queue: string, from: number): Promise<readonly string[]>;
  /**
   * Give the lease up (as `release`) and say how many items wait in `queue` then — so input that
   * arrived while it was held is never left behind: false and -1 when `token` no longer held it.
   */
  releaseAndCount(key: string, token: string, queue: string): Promise<{ released: boolean; waiting: number }>;
  /**
   * Send `message` to every current subscriber of `channel` (in every process); resolves false
   * when it reached none (nobody listens there now: the process that did has died, say).
   */
  publish(channel: string, message: string): Promise<boolean>;
  /** Deliver every later message on `channel` to `listener`, in publish order. */
  subscribe(channel: string, listener: (message: string) => void): Promise<Unsubscribe>;
  /** True for the one caller that claims `key` first within `ttlMs`; false for everyone else. */
  claimOnce(key: string, ttlMs: number): Promise<boolean>;
  /** Add a member to a shared set (an index). */
  addMember(set: string, member: string): Promise<void>;
  /** Remove a member from a shared set. */
  removeMember(set: string, member: string): Promise<void>;
  /** The members of a shared set now. */
  members(set: string): Promise<readonly string[]>;
  /**
   * The members of a shared set whose lease (`leasePrefix` + member) nobody holds now — in one
   * step, however large the set (sessions with work whose holder is gone).
   */
  unleasedMembers(set: string, leasePrefix: string): Promise<readonly string[]>;
  /** Set one field of a shared map (an index keyed by id). */
  setField(map: string, field: string, value: string): Promise<void>;
  /** Remove one field of a shared map; true when it was there. */
  deleteField(map: string, field: string): Promise<boolean>;
  /** Every field of a shared map now. */
  fields(map: string): Promise<Readonly<Record<string, string>>>;
  /** Whether the coordination backend answers and, when it does not, why (for /readyz). */
  ping(): Promise<StoreHealth>;
  /** Drop every subscription and close the connections; leases are not released. */
  close(): Promise<void>;
}
