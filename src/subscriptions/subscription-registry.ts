/**
 * SubscriptionRegistry: the persisted subscriptions ("subscriptions" space) and their in-memory
 * indexes by session and by channel. The store has no key listing, so a catalog record lists the
 * ids: a new record is written before the catalog names it, and the catalog forgets an id before
 * its record is deleted, so a crash never leaves the catalog naming a missing record. Loading
 * skips (and reports) a record it cannot read instead of refusing to start. Also keeps, per
 * subscription, how far its wake-ups have delivered, so pending batches can be rebuilt on start.
 */
import { z } from "zod";
import { KeyedMutex } from "../store/key-mutex.js";
import type { KeyValueSpace } from "../store/store.js";
import { fromVersioned, toVersioned } from "../store/versioned.js";
import { type BufferPosition, bufferPositionSchema } from "./buffer-entry.js";
import {
  channelKeyOf,
  freezeSubscription,
  type Subscription,
  scopeKeyOf,
  subscriptionSchema,
} from "./subscription.js";

export const SUBSCRIPTION_KIND = "subscription";
export const CATALOG_KIND = "subscription-catalog";
export const WOKEN_KIND = "subscription-woken";
const CATALOG_KEY = "catalog";

const catalogSchema = z.object({ ids: z.array(z.string()) });

/** Store key of a subscription record. */
export const subscriptionKey = (id: string) => `sub:${id}`;
/** Store key of a subscription's "woken through" marker. */
export const wokenKey = (id: string) => `woken:${id}`;

/** Persisted subscriptions with indexes by session and by channel. */
export class SubscriptionRegistry {
  private readonly byId = new Map<string, Subscription>();
  private readonly bySession = new Map<string, Set<string>>();
  private readonly byChannel = new Map<string, Set<string>>();
  private readonly mutex = new KeyedMutex();

  private constructor(private readonly space: KeyValueSpace) {}

  /** Load every subscription the catalog names; unreadable ones are reported to `onError` and skipped. */
  static async load(
    space: KeyValueSpace,
    onError: (error: unknown, context: string) => void,
  ): Promise<SubscriptionRegistry> {
    const registry = new SubscriptionRegistry(space);
    for (const id of await registry.catalog()) {
      try {
        const raw = await space.get(subscriptionKey(id));
        if (raw === undefined)
          throw new Error(`subscription ${id} is in the catalog but its record is missing`);
        const data = fromVersioned(raw, { kind: SUBSCRIPTION_KIND, schema: subscriptionSchema, where: id });
        registry.index(freezeSubscription(data));
      } catch (error) {
        onError(error, `loading subscription ${id}`);
      }
    }
    return registry;
  }

  /** Every subscription. */
  all(): readonly Subscription[] {
    return [...this.byId.values()];
  }

  get(id: string): Subscription | undefined {
    return this.byId.get(id);
  }

  /** The session's subscriptions, oldest first. */
  forSession(sessionId: string): readonly Subscription[] {
    return this.pick(this.bySession.get(sessionId));
  }

  /** Subscriptions watching the channel (any topic of it). */
  forChannel(channelKey: string): readonly Subscription[] {
    return this.pick(this.byChannel.get(channelKey));
  }

  /** The session's subscription to exactly this channel scope. */
  find(sessionId: string, scopeKey: string): Subscription | undefined {
    return this.forSession(sessionId).find((s) => scopeKeyOf(s.channelRef) === scopeKey);
  }

  /** Create or replace a subscription (validated; the catalog is written after the record). */
  async put(subscription: Subscription): Promise<Subscription> {
    const valid = freezeSubscription(subscriptionSchema.parse(subscription));
    return this.mutex.run(CATALOG_KEY, async () => {
      await this.space.set(subscriptionKey(valid.id), toVersioned(SUBSCRIPTION_KIND, valid));
      if (!this.byId.has(valid.id)) await this.writeCatalog([...this.byId.keys(), valid.id]);
      this.unindex(valid.id);
      this.index(valid);
      return valid;
    });
  }

  /** Remove a subscription and its wake marker; returns it, or undefined when unknown. */
  async remove(id: string): Promise<Subscription | undefined> {
    return this.mutex.run(CATALOG_KEY, async () => {
      const existing = this.byId.get(id);
      if (!existing) return undefined;
      await this.writeCatalog([...this.byId.keys()].filter((other) => other !== id));
      this.unindex(id);
      await this.space.delete(subscriptionKey(id));
      await this.space.delete(wokenKey(id));
      return existing;
    });
  }

  /** How far wake-ups of the subscription have delivered (undefined: none yet). */
  async wokenThrough(id: string): Promise<BufferPosition | undefined> {
    const raw = await this.space.get(wokenKey(id));
    if (raw === undefined) return undefined;
    return fromVersioned(raw, { kind: WOKEN_KIND, schema: bufferPositionSchema, where: id });
  }

  /** Record a delivered wake-up (only for a subscription that still exists). */
  async markWoken(id: string, position: BufferPosition): Promise<void> {
    await this.mutex.run(CATALOG_KEY, async () => {
      if (this.byId.has(id)) await this.space.set(wokenKey(id), toVersioned(WOKEN_KIND, position));
    });
  }

  private async catalog(): Promise<string[]> {
    const raw = await this.space.get(CATALOG_KEY);
    if (raw === undefined) return [];
    return fromVersioned(raw, { kind: CATALOG_KIND, schema: catalogSchema, where: CATALOG_KEY }).ids;
  }

  private async writeCatalog(ids: readonly string[]): Promise<void> {
    await this.space.set(CATALOG_KEY, toVersioned(CATALOG_KIND, { ids }));
  }

  private pick(ids: ReadonlySet<string> | undefined): readonly Subscription[] {
    if (!ids) return [];
    return [...ids]
      .map((id) => this.byId.get(id))
      .filter((s): s is Subscription => s !== undefined)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  private index(subscription: Subscription): void {
    this.byId.set(subscription.id, subscription);
    addTo(this.bySession, subscription.sessionId, subscription.id);
    addTo(this.byChannel, channelKeyOf(subscription.channelRef), subscription.id);
  }

  private unindex(id: string): void {
    const existing = this.byId.get(id);
    if (!existing) return;
    this.byId.delete(id);
    removeFrom(this.bySession, existing.sessionId, id);
    removeFrom(this.byChannel, channelKeyOf(existing.channelRef), id);
  }
}

function addTo(index: Map<string, Set<string>>, key: string, id: string): void {
  const ids = index.get(key) ?? new Set<string>();
  ids.add(id);
  index.set(key, ids);
}

function removeFrom(index: Map<string, Set<string>>, key: string, id: string): void {
  const ids = index.get(key);
  if (!ids) return;
  ids.delete(id);
  if (ids.size === 0) index.delete(key);
}
