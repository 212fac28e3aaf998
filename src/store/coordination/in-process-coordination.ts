/**
 * InProcessCoordination: the coordination contract inside one process, for the single-process
 * default (SQLite, Postgres, memory stores). Leases, fences, queues, claims and sets live in Maps
 * (expiry checked on access); pub/sub delivers to this process's listeners; fenced writes go to
 * the store's spaces after the fence check. Input is checked as on Redis, whole and first
 * (coordination-input.ts), so both refuse the same calls and neither writes half of one.
 */
import { type SpaceEntry, type Store, type StoreHealth, type StoreNamespace, setAll } from "../store.js";
import {
  type Coordination,
  type FencedWrite,
  type FenceRef,
  type LeaseGrant,
  newLeaseToken,
  type Offer,
  type OfferOutcome,
  type StoreWrite,
  type Unsubscribe,
} from "./coordination.js";
import { checkFencedWrites, checkLeaseTtl, checkOffer, checkStoreWrites } from "./coordination-input.js";

/** A coordination store write as a space entry. */
function entryOf(write: StoreWrite): SpaceEntry {
  return { key: write.key, value: write.value, ...(write.ttlMs === undefined ? {} : { ttlMs: write.ttlMs }) };
}

interface Held {
  readonly token: string;
  expiresAt: number;
}

/** Coordination for one process. */
export class InProcessCoordination implements Coordination {
  readonly distributed = false;
  private readonly leases = new Map<string, Held>();
  private readonly fences = new Map<string, number>();
  private readonly queues = new Map<string, string[]>();
  private readonly claims = new Map<string, number>();
  private readonly sets = new Map<string, Set<string>>();
  private readonly maps = new Map<string, Map<string, string>>();
  private readonly listeners = new Map<string, Set<(message: string) => void>>();
  /** The last claim-checking step (offers, inserts): they run one after another. */
  private offering: Promise<unknown> = Promise.resolve();
  private closed = false;

  /** @param store Where fenced writes land. @param now The clock leases and claims expire by. */
  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
  ) {}

  async acquire(key: string, ttlMs: number, owner?: string): Promise<LeaseGrant | undefined> {
    this.assertOpen();
    checkLeaseTtl(key, ttlMs);
    if (this.live(key)) return undefined;
    const token = newLeaseToken(owner);
    const fence = (this.fences.get(key) ?? 0) + 1;
    this.fences.set(key, fence);
    this.leases.set(key, { token, expiresAt: this.now() + ttlMs });
    return { token, fence };
  }

  async renew(key: string, token: string, ttlMs: number): Promise<boolean> {
    checkLeaseTtl(key, ttlMs);
    const held = this.live(key);
    if (held?.token !== token) return false;
    held.expiresAt = this.now() + ttlMs;
    return true;
  }

  async release(key: string, token: string): Promise<boolean> {
    if (this.live(key)?.token !== token) return false;
    this.leases.delete(key);
    return true;
  }

  async holder(key: string): Promise<string | undefined> {
    return this.live(key)?.token;
  }

  async currentFence(key: string): Promise<number> {
    return this.fences.get(key) ?? 0;
  }

  async fencedWrite(fence: FenceRef, writes: readonly FencedWrite[]): Promise<boolean> {
    this.assertOpen();
    checkFencedWrites(writes);
    if ((this.fences.get(fence.key) ?? 0) !== fence.fence) return false;
    let batch: { namespace: StoreNamespace; entries: SpaceEntry[] } | undefined;
    const flush = async () => {
      if (batch) await setAll(this.store.space(batch.namespace), batch.entries);
      batch = undefined;
    };
    for (const write of writes) {
      if (write.op === "set") {
        if (batch && batch.namespace !== write.namespace) await flush();
        batch ??= { namespace: write.namespace, entries: [] };
        batch.entries.push(entryOf(write));
        continue;
      }
      await flush();
      if (write.op === "delete") await this.store.space(write.namespace).delete(write.key);
      else if (write.op === "trim") this.queues.get(write.queue)?.splice(0, write.count);
      else if (write.op === "remove-item") this.removeItem(write.queue, write.item);
      else if (write.op === "add-member") await this.addMember(write.set, write.member);
      else await this.removeMember(write.set, write.member);
    }
    await flush();
    return true;
  }

  insertIfAbsent(first: StoreWrite, rest: readonly StoreWrite[]): Promise<boolean> {
    this.assertOpen();
    return this.serialised(async () => {
      checkStoreWrites([first, ...rest]);
      if ((await this.store.space(first.namespace).get(first.key)) !== undefined) return false;
      for (const write of [first, ...rest]) await setAll(this.store.space(write.namespace), [entryOf(write)]);
      return true;
    });
  }

  /** Run `step` after every step started before it (claim checks and their writes must not interleave). */
  private serialised<T>(step: () => Promise<T>): Promise<T> {
    const run = this.offering.then(step);
    this.offering = run.catch(() => undefined);
    return run;
  }

  offer(offer: Offer): Promise<OfferOutcome> {
    this.assertOpen();
    return this.serialised(async (): Promise<OfferOutcome> => {
      checkOffer(offer);
      for (const claim of offer.claims)
        if ((await this.store.space(claim.namespace).get(claim.key)) !== undefined)
          return { status: "duplicate" };
      for (const claim of offer.claims) await setAll(this.store.space(claim.namespace), [entryOf(claim)]);
      await this.addMember(offer.index.set, offer.index.member);
      const items = this.queues.get(offer.queue) ?? [];
      items.push(offer.item);
      this.queues.set(offer.queue, items);
      const { key, ttlMs, owner } = offer.lease;
      const grant = await this.acquire(key, ttlMs, owner);
      if (grant) return { status: "taken", grant, items: [...items] };
      return { status: "queued", holder: this.live(key)?.token };
    });
  }

  async items(queue: string, from: number): Promise<readonly string[]> {
    return (this.queues.get(queue) ?? []).slice(from);
  }

  async releaseAndCount(
    key: string,
    token: string,
    queue: string,
  ): Promise<{ released: boolean; waiting: number }> {
    if (!(await this.release(key, token))) return { released: false, waiting: -1 };
    return { released: true, waiting: this.queues.get(queue)?.length ?? 0 };
  }

  async publish(channel: string, message: string): Promise<boolean> {
    this.assertOpen();
    const listeners = [...(this.listeners.get(channel) ?? [])];
    // Delivered later, as a broker would: a publisher never runs its own listeners inline.
    setImmediate(() => {
      for (const listener of listeners) listener(message);
    });
    return listeners.length > 0;
  }

  async subscribe(channel: string, listener: (message: string) => void): Promise<Unsubscribe> {
    this.assertOpen();
    // Each subscription gets its own wrapper, so one listener subscribed twice is two subscriptions.
    const wrapper = (message: string) => listener(message);
    const listeners = this.listeners.get(channel) ?? new Set();
    listeners.add(wrapper);
    this.listeners.set(channel, listeners);
    return async () => {
      listeners.delete(wrapper);
      if (listeners.size === 0 && this.listeners.get(channel) === listeners) this.listeners.delete(channel);
    };
  }

  async claimOnce(key: string, ttlMs: number): Promise<boolean> {
    this.assertOpen();
    checkLeaseTtl(key, ttlMs);
    const until = this.claims.get(key);
    if (until !== undefined && until > this.now()) return false;
    this.claims.set(key, this.now() + ttlMs);
    return true;
  }

  async addMember(set: string, member: string): Promise<void> {
    const members = this.sets.get(set) ?? new Set();
    members.add(member);
    this.sets.set(set, members);
  }

  async removeMember(set: string, member: string): Promise<void> {
    this.sets.get(set)?.delete(member);
  }

  async members(set: string): Promise<readonly string[]> {
    return [...(this.sets.get(set) ?? [])];
  }

  async unleasedMembers(set: string, leasePrefix: string): Promise<readonly string[]> {
    return [...(this.sets.get(set) ?? [])].filter((member) => !this.live(`${leasePrefix}${member}`));
  }

  async setField(map: string, field: string, value: string): Promise<void> {
    const fields = this.maps.get(map) ?? new Map<string, string>();
    fields.set(field, value);
    this.maps.set(map, fields);
  }

  async deleteField(map: string, field: string): Promise<boolean> {
    return this.maps.get(map)?.delete(field) ?? false;
  }

  async fields(map: string): Promise<Readonly<Record<string, string>>> {
    return Object.fromEntries(this.maps.get(map) ?? []);
  }

  async ping(): Promise<StoreHealth> {
    return this.closed ? { ok: false, detail: "the coordination is closed" } : { ok: true };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
  }

  /** Remove the first item of `queue` equal to `item`, if any. */
  private removeItem(queue: string, item: string): void {
    const items = this.queues.get(queue);
    const at = items?.indexOf(item) ?? -1;
    if (at >= 0) items?.splice(at, 1);
  }

  /** The unexpired lease on `key`, dropping an expired one. */
  private live(key: string): Held | undefined {
    const held = this.leases.get(key);
    if (held && held.expiresAt <= this.now()) {
      this.leases.delete(key);
      return undefined;
    }
    return held;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error("coordination is closed");
  }
}
