/**
 * SubscriptionRegistry: the persisted subscriptions ("subscriptions" space) and their in-memory
 * indexes by id, session and channel — in memory so that every channel message observed costs one
 * map lookup. Which subscriptions exist is the catalog's (subscription-catalog.ts). Loading skips
 * (and reports) a record it cannot read instead of refusing to start. Also moves, per
 * subscription, its wake marker (wake-markers.ts: how far its wake-ups have delivered, so pending
 * batches can be rebuilt), only forward and only while the subscription exists.
 *
 * With a shared catalog other processes change the subscriptions too, and the indexes follow:
 * each announced change re-reads that one record (or drops it); `refresh` checks the whole copy
 * against the catalog's revisions in one read and re-reads only what changed — the person-facing
 * reads call it first, and it runs periodically, so a lost announcement is repaired within the
 * reconciliation interval. Every change to the indexes runs one at a time, so a re-read finished
 * late never undoes a later one. A change to an existing subscription (`update`: "new" moving it,
 * a channel's new id) is a compare-and-set of its record as stored now, so it never undoes what
 * another process wrote or removed in between.
 */
import { IdIndex } from "../core/id-index.js";
import { KeyedMutex } from "../store/key-mutex.js";
import { getAll, type KeyValueSpace } from "../store/store.js";
import { fromVersioned, toVersioned } from "../store/versioned.js";
import { type BufferPosition, laterOf } from "./buffer-entry.js";
import { readWoken, wokenKey, wokenRecord } from "./wake-markers.js";
import type { Clock } from "../core/clock.js";
import { PeriodicTask } from "../core/periodic-task.js";
import type { CatalogChange, SubscriptionCatalog } from "./subscription-catalog.js";
import {
  channelKeyOf,
  freezeSubscription,
  type Subscription,
  scopeKeyOf,
  subscriptionSchema,
} from "./subscription.js";

export const SUBSCRIPTION_KIND = "subscription";

/** Store key of a subscription record. */
export const subscriptionKey = (id: string) => `sub:${id}`;

/** How many times an update is tried on a fresh read while other writers keep changing the record. */
const MAX_UPDATE_ATTEMPTS = 5;

/** The one key every change to the indexes is serialised on. */
const INDEXES = "indexes";

export interface SubscriptionRegistryOptions {
  readonly catalog: SubscriptionCatalog;
  /** Unreadable records (each reported once per revision) and failed reconciliations. */
  readonly onError: (error: unknown, context: string) => void;
  /** A subscription this process knew was removed elsewhere (or became unreadable). */
  readonly onGone?: (id: string) => void;
  /** With a shared catalog: reconcile with it every `intervalMs` on `clock`. */
  readonly reconcile?: { readonly clock: Clock; readonly intervalMs: number };
}

interface Known {
  readonly subscription: Subscription;
  /** The catalog's revision the record was read at (or written with). */
  readonly revision: string;
}

/** Persisted subscriptions with indexes by session and by channel. */
export class SubscriptionRegistry {
  private readonly byId = new Map<string, Known>();
  private readonly bySession = new IdIndex();
  private readonly byChannel = new IdIndex();
  /** Ids whose record could not be read, at the revision that was tried (reported once). */
  private readonly unreadable = new Map<string, string>();
  private readonly mutex = new KeyedMutex();
  private readonly catalog: SubscriptionCatalog;
  /** A refresh queued and not started yet: later callers share it. */
  private queuedRefresh: Promise<void> | undefined;
  /** With a shared catalog and `reconcile`: the periodic refresh. */
  private reconciling: PeriodicTask | undefined;
  private closed = false;

  private constructor(
    private readonly space: KeyValueSpace,
    private readonly options: SubscriptionRegistryOptions,
  ) {
    this.catalog = options.catalog;
  }

  /**
   * Load every subscription the catalog names (unreadable ones are reported and skipped), after
   * starting to listen for changes so none made meanwhile is missed; then reconcile periodically.
   */
  static async open(
    space: KeyValueSpace,
    options: SubscriptionRegistryOptions,
  ): Promise<SubscriptionRegistry> {
    const registry = new SubscriptionRegistry(space, options);
    await options.catalog.watch((change) => registry.changed(change));
    await registry.serially(() => registry.reconcile(true));
    registry.startReconciling();
    return registry;
  }

  /** Every subscription. */
  all(): readonly Subscription[] {
    return [...this.byId.values()].map((known) => known.subscription);
  }

  get(id: string): Subscription | undefined {
    return this.byId.get(id)?.subscription;
  }

  /** The session's subscriptions, oldest first. */
  forSession(sessionId: string): readonly Subscription[] {
    return this.pick(this.bySession.idsOf(sessionId));
  }

  /** Subscriptions watching the channel (any topic of it). */
  forChannel(channelKey: string): readonly Subscription[] {
    return this.pick(this.byChannel.idsOf(channelKey));
  }

  /** The session's subscription to exactly this channel scope. */
  find(sessionId: string, scopeKey: string): Subscription | undefined {
    return this.forSession(sessionId).find((s) => scopeKeyOf(s.channelRef) === scopeKey);
  }

  /**
   * Bring the indexes in line with a shared catalog: one read of it, then the records whose
   * revision differs, in one read; ids it no longer names are dropped. Nothing to do (and no store
   * access) with a single process's catalog. Callers arriving while a refresh waits to start
   * share it.
   */
  refresh(): Promise<void> {
    if (!this.catalog.shared || this.closed) return Promise.resolve();
    this.queuedRefresh ??= this.serially(async () => {
      this.queuedRefresh = undefined;
      if (!this.closed) await this.reconcile(false);
    });
    return this.queuedRefresh;
  }

  /**
   * The subscription as stored now, for acting on it (a wake-up): with a shared catalog its record
   * is read again, and a subscription removed elsewhere is dropped here and comes back undefined.
   */
  async current(id: string): Promise<Subscription | undefined> {
    if (!this.catalog.shared) return this.get(id);
    const raw = await this.space.get(subscriptionKey(id));
    if (raw === undefined) {
      await this.serially(async () => this.drop(id));
      return undefined;
    }
    return freezeSubscription(
      fromVersioned(raw, { kind: SUBSCRIPTION_KIND, schema: subscriptionSchema, where: id }),
    );
  }

  /**
   * Rewrite the stored subscription `id` as `change` makes it from its record as stored now
   * (`change` answering undefined leaves it be): a compare-and-set of the record, tried again on a
   * fresh read when another writer changed it meanwhile, so nothing written elsewhere in between
   * is undone. A subscription removed meanwhile stays removed — an update never names an id in the
   * catalog again — and comes back undefined, as does one left be.
   */
  async update(
    id: string,
    change: (current: Subscription) => Subscription | undefined,
  ): Promise<Subscription | undefined> {
    for (let attempt = 1; ; attempt += 1) {
      const raw = await this.space.get(subscriptionKey(id));
      if (raw === undefined) {
        await this.serially(async () => this.drop(id));
        return undefined;
      }
      const current = freezeSubscription(
        fromVersioned(raw, { kind: SUBSCRIPTION_KIND, schema: subscriptionSchema, where: id }),
      );
      const wanted = change(current);
      if (wanted === undefined) return undefined;
      const next = freezeSubscription(subscriptionSchema.parse({ ...wanted, id }));
      const outcome = await this.serially(() => this.replace(raw, next));
      if (outcome !== "changed") return outcome === "written" ? next : undefined;
      if (attempt >= MAX_UPDATE_ATTEMPTS)
        throw new Error(`subscription ${id} kept changing while it was being updated`);
    }
  }

  /**
   * Write `next` over the record while it still holds `expected`, then give it its new revision
   * in the catalog: "changed" when the record was rewritten meanwhile, "gone" when it was removed
   * (before the write, or while the revision was being set: then the id is forgotten again).
   */
  private async replace(expected: unknown, next: Subscription): Promise<"written" | "changed" | "gone"> {
    const key = subscriptionKey(next.id);
    // With one process every removal runs under this lock, and one already done is not indexed.
    if (!this.catalog.shared && !this.byId.has(next.id)) return "gone";
    if (!(await this.space.replaceIf(key, expected, toVersioned(SUBSCRIPTION_KIND, next)))) {
      if ((await this.space.get(key)) !== undefined) return "changed";
      this.drop(next.id);
      return "gone";
    }
    const revision = await this.catalog.add(next.id);
    // A removal elsewhere may have forgotten the id just before it was named again: it deletes the
    // record before forgetting the id a second time, so one of the two sees the other.
    if (this.catalog.shared && (await this.space.get(key)) === undefined) {
      await this.catalog.remove(next.id);
      this.drop(next.id);
      return "gone";
    }
    this.unindex(next.id);
    this.index(next, revision);
    return "written";
  }

  /** Create a subscription, or replace one outright (validated; the catalog names it after its record is written). */
  async put(subscription: Subscription): Promise<Subscription> {
    const valid = freezeSubscription(subscriptionSchema.parse(subscription));
    return this.serially(async () => {
      await this.space.set(subscriptionKey(valid.id), toVersioned(SUBSCRIPTION_KIND, valid));
      const revision = await this.catalog.add(valid.id);
      this.unindex(valid.id);
      this.index(valid, revision);
      return valid;
    });
  }

  /** Remove a subscription and its wake marker; returns it, or undefined when unknown here. */
  async remove(id: string): Promise<Subscription | undefined> {
    return this.serially(async () => {
      const existing = this.byId.get(id)?.subscription;
      if (!existing) return undefined;
      await this.catalog.remove(id);
      this.unindex(id);
      await this.space.delete(subscriptionKey(id));
      await this.space.delete(wokenKey(id));
      // An update elsewhere that wrote the record before it was deleted may have named the id again.
      if (this.catalog.shared) await this.catalog.remove(id);
      return existing;
    });
  }

  /** How far wake-ups of the subscription have delivered (undefined: none yet). */
  wokenThrough(id: string): Promise<BufferPosition | undefined> {
    return readWoken(this.space, id);
  }

  /**
   * Record a delivered wake-up (only for a subscription that still exists): the marker only moves
   * forward, so a wake-up recorded late never brings back one already delivered. With a shared catalog
   * another process may have removed it meanwhile: the marker is written, then taken back when
   * the record is gone — a remover deletes the record before the marker, so none is left behind.
   */
  async markWoken(id: string, position: BufferPosition): Promise<void> {
    await this.serially(async () => {
      if (!this.byId.has(id)) return;
      const current = await this.wokenThrough(id);
      if (laterOf(current, position) !== position) return;
      await this.space.set(wokenKey(id), wokenRecord(position));
      if (this.catalog.shared && (await this.space.get(subscriptionKey(id))) === undefined)
        await this.space.delete(wokenKey(id));
    });
  }

  /** Stop reconciling and listening for changes; resolves once a re-read under way has finished. */
  async close(): Promise<void> {
    this.closed = true;
    this.reconciling?.stop();
    await this.catalog.close();
    await this.serially(async () => undefined);
  }

  private serially<T>(task: () => Promise<T>): Promise<T> {
    return this.mutex.run(INDEXES, task);
  }

  /** An announced change: drop a removed subscription, re-read a changed one. */
  private changed(change: CatalogChange): void {
    this.serially(async () => {
      const { id, revision } = change;
      if (this.closed) return;
      if (revision === undefined) this.drop(id);
      else if (!this.hasRead(id, revision))
        this.adopt(id, revision, await this.space.get(subscriptionKey(id)), false);
    }).catch((error: unknown) => this.options.onError(error, `re-reading subscription ${change.id}`));
  }

  /** Compare with the catalog and re-read what changed (everything on the first load). */
  private async reconcile(initial: boolean): Promise<void> {
    const entries = await this.catalog.entries();
    for (const id of [...this.byId.keys()]) if (!entries.has(id)) this.drop(id);
    for (const id of [...this.unreadable.keys()]) if (!entries.has(id)) this.unreadable.delete(id);
    const changed = [...entries].filter(([id, revision]) => !this.hasRead(id, revision));
    if (changed.length === 0) return;
    const records = await getAll(
      this.space,
      changed.map(([id]) => subscriptionKey(id)),
    );
    for (const [at, [id, revision]] of changed.entries()) this.adopt(id, revision, records[at], initial);
  }

  /**
   * Index the record read for `id` at `revision`, or drop the id when it is missing or unreadable.
   * A missing record is reported only on the first load: later, the catalog can name an id whose
   * removal is under way (the catalog is read before the record).
   */
  private adopt(id: string, revision: string, raw: unknown, initial: boolean): void {
    try {
      if (raw === undefined) {
        if (initial) throw new Error(`subscription ${id} is in the catalog but its record is missing`);
        this.drop(id);
        return;
      }
      const data = fromVersioned(raw, { kind: SUBSCRIPTION_KIND, schema: subscriptionSchema, where: id });
      this.unindex(id);
      this.index(freezeSubscription(data), revision);
      this.unreadable.delete(id);
    } catch (error) {
      this.drop(id);
      this.unreadable.set(id, revision);
      this.options.onError(error, `loading subscription ${id}`);
    }
  }

  /** Whether the record of `id` was read at `revision` already (indexed, or found unreadable). */
  private hasRead(id: string, revision: string): boolean {
    return this.byId.get(id)?.revision === revision || this.unreadable.get(id) === revision;
  }

  /** Forget a subscription removed (or made unreadable) elsewhere. */
  private drop(id: string): void {
    if (!this.byId.has(id)) return;
    this.unindex(id);
    this.options.onGone?.(id);
  }

  private startReconciling(): void {
    const reconcile = this.options.reconcile;
    if (!reconcile || !this.catalog.shared || this.closed) return;
    this.reconciling = new PeriodicTask({
      clock: reconcile.clock,
      intervalMs: reconcile.intervalMs,
      run: () => this.refresh(),
      onError: (error) => this.options.onError(error, "reconciling subscriptions with the shared catalog"),
    });
  }

  private pick(ids: ReadonlySet<string> | undefined): readonly Subscription[] {
    if (!ids) return [];
    return [...ids]
      .map((id) => this.byId.get(id)?.subscription)
      .filter((s): s is Subscription => s !== undefined)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  private index(subscription: Subscription, revision: string): void {
    this.byId.set(subscription.id, { subscription, revision });
    this.bySession.add(subscription.sessionId, subscription.id);
    this.byChannel.add(channelKeyOf(subscription.channelRef), subscription.id);
  }

  private unindex(id: string): void {
    const existing = this.byId.get(id)?.subscription;
    if (!existing) return;
    this.byId.delete(id);
    this.bySession.remove(existing.sessionId, id);
    this.byChannel.remove(channelKeyOf(existing.channelRef), id);
  }
}
