/**
 * Coordination: what several Coworker processes on one store agree through — per-key leases with
 * fencing numbers, writes refused when their fence is stale, shared FIFO queues, pub/sub channels,
 * one-time claims and shared sets (indexes). Redis provides it across processes; the in-process
 * implementation gives the single-process default (SQLite, Postgres, memory) the same contract.
 */
import { randomUUID } from "node:crypto";
import type { StoreNamespace } from "../store.js";

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

/** One store write made under a fence. */
export type FencedWrite =
  | {
      readonly op: "set";
      readonly namespace: StoreNamespace;
      readonly key: string;
      readonly value: unknown;
      readonly ttlMs?: number;
    }
  | { readonly op: "delete"; readonly namespace: StoreNamespace; readonly key: string };

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
  /** Append to a shared FIFO queue; resolves with its new length. */
  push(queue: string, item: string): Promise<number>;
  /** The oldest item of a queue, left in place; undefined when empty. */
  peek(queue: string): Promise<string | undefined>;
  /**
   * Remove the oldest item of a queue if it is still `item` (compare-and-remove, so an item is
   * removed once however many callers saw it); false when the head is something else.
   */
  removeHead(queue: string, item: string): Promise<boolean>;
  /** How many items wait in a queue. */
  queueLength(queue: string): Promise<number>;
  /** Send `message` to every current subscriber of `channel` (in every process). */
  publish(channel: string, message: string): Promise<void>;
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
  /** Set one field of a shared map (an index keyed by id). */
  setField(map: string, field: string, value: string): Promise<void>;
  /** Remove one field of a shared map; true when it was there. */
  deleteField(map: string, field: string): Promise<boolean>;
  /** Every field of a shared map now. */
  fields(map: string): Promise<Readonly<Record<string, string>>>;
  /** Whether the coordination backend answers (for /readyz). */
  ping(): Promise<boolean>;
  /** Drop every subscription and close the connections; leases are not released. */
  close(): Promise<void>;
}
