/**
 * SubscriptionCatalog: which subscriptions exist — the store has no key listing — each with a
 * revision that changes whenever its record is rewritten, so a copy of the indexes can be checked
 * against it in one read. The registry writes a record before the catalog names it and has the
 * catalog forget an id before its record is deleted, so the catalog names a missing record only
 * while an update races a removal (each then forgets the id again once the record is gone).
 *
 * `LocalCatalog` is the single-process one: one record in the "subscriptions" space listing the
 * ids, rewritten whole — only this process writes it, so its copy is never stale and revisions
 * are not kept. `SharedCatalog` (shared-catalog.ts) is the one several processes share.
 */
import { z } from "zod";
import type { KeyValueSpace } from "../store/store.js";
import { fromVersioned, toVersioned } from "../store/versioned.js";

export const CATALOG_KIND = "subscription-catalog";
/** Store key (in the "subscriptions" space) of the single-process catalog record. */
export const CATALOG_KEY = "catalog";

const catalogSchema = z.object({ ids: z.array(z.string()) });

/** A change to the catalog, as announced to the processes sharing it: no revision means removed. */
export interface CatalogChange {
  readonly id: string;
  readonly revision?: string;
}

/** The ids of the stored subscriptions and their revisions. */
export interface SubscriptionCatalog {
  /** True when other processes change the catalog too, so a copy of it may be stale. */
  readonly shared: boolean;
  /** Every id, with its revision, now. */
  entries(): Promise<ReadonlyMap<string, string>>;
  /** Name `id` (its record was just written) at a new revision, which it returns; announced when shared. */
  add(id: string): Promise<string>;
  /** Forget `id` (before its record is deleted); announced when shared. */
  remove(id: string): Promise<void>;
  /** Hand every later announced change (this process's too) to `listener`; resolves once listening. */
  watch(listener: (change: CatalogChange) => void): Promise<void>;
  /** Stop listening. */
  close(): Promise<void>;
}

/** The ids listed by the catalog record in `space` (none when there is no record). */
export async function readCatalogRecord(space: KeyValueSpace): Promise<readonly string[]> {
  const raw = await space.get(CATALOG_KEY);
  if (raw === undefined) return [];
  return fromVersioned(raw, { kind: CATALOG_KIND, schema: catalogSchema, where: CATALOG_KEY }).ids;
}

/** The catalog of a single process: one record listing the ids (revisions are all ""). */
export class LocalCatalog implements SubscriptionCatalog {
  readonly shared = false;
  private ids: string[] | undefined;

  constructor(private readonly space: KeyValueSpace) {}

  async entries(): Promise<ReadonlyMap<string, string>> {
    return new Map((await this.loaded()).map((id) => [id, ""]));
  }

  async add(id: string): Promise<string> {
    const ids = await this.loaded();
    if (!ids.includes(id)) await this.write([...ids, id]);
    return "";
  }

  async remove(id: string): Promise<void> {
    const ids = await this.loaded();
    if (ids.includes(id)) await this.write(ids.filter((other) => other !== id));
  }

  async watch(): Promise<void> {}

  async close(): Promise<void> {}

  private async loaded(): Promise<string[]> {
    this.ids ??= [...(await readCatalogRecord(this.space))];
    return this.ids;
  }

  private async write(ids: string[]): Promise<void> {
    await this.space.set(CATALOG_KEY, toVersioned(CATALOG_KIND, { ids }));
    this.ids = ids;
  }
}
