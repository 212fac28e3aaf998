/**
 * SharedCatalog: the subscription catalog when several processes share the store (a distributed
 * coordination). The ids live in a shared map, id → revision, where every add and remove is one
 * atomic field write — two processes subscribing at once both land, where rewriting one catalog
 * record would lose one. Each change is announced on a pub/sub channel naming the subscription,
 * so the other processes' registries re-read that one record at once; an announcement that is
 * lost (a reconnect) leaves the map right, and the registries' reconciliation against it finds
 * the change. Opening moves the ids of a catalog record written by one process before (a single
 * process on Redis, before the catalog was shared) into the map.
 */
import { randomBytes } from "node:crypto";
import { z } from "zod";
import type { Coordination, Unsubscribe } from "../store/coordination/coordination.js";
import type { KeyValueSpace } from "../store/store.js";
import {
  CATALOG_KEY,
  type CatalogChange,
  readCatalogRecord,
  type SubscriptionCatalog,
} from "./subscription-catalog.js";

/** The shared map of subscription ids to revisions. */
const CATALOG_MAP = "subscription-catalog";
/** Where changes to it are announced. */
const CHANGES_CHANNEL = "subscription-changes";
/** The revision of an id moved over from a catalog record (its record was never re-announced). */
const MOVED_REVISION = "moved";

const changeSchema = z.object({
  id: z.string().min(1).max(120),
  revision: z.string().min(1).max(64).optional(),
});

/** The catalog several processes share through their coordination. */
export class SharedCatalog implements SubscriptionCatalog {
  readonly shared = true;
  private unsubscribe: Unsubscribe | undefined;

  private constructor(
    private readonly coordination: Coordination,
    private readonly onError: (error: unknown, context: string) => void,
  ) {}

  /** Open on `coordination`, first moving the ids of the catalog record in `space` (if any) into the map. */
  static async open(
    coordination: Coordination,
    space: KeyValueSpace,
    onError: (error: unknown, context: string) => void,
  ): Promise<SharedCatalog> {
    const earlier = await readCatalogRecord(space);
    for (const id of earlier) await coordination.setField(CATALOG_MAP, id, MOVED_REVISION);
    if (earlier.length > 0) await space.delete(CATALOG_KEY);
    return new SharedCatalog(coordination, onError);
  }

  async entries(): Promise<ReadonlyMap<string, string>> {
    return new Map(Object.entries(await this.coordination.fields(CATALOG_MAP)));
  }

  async add(id: string): Promise<string> {
    const revision = randomBytes(6).toString("hex");
    await this.coordination.setField(CATALOG_MAP, id, revision);
    await this.announce({ id, revision });
    return revision;
  }

  async remove(id: string): Promise<void> {
    await this.coordination.deleteField(CATALOG_MAP, id);
    await this.announce({ id });
  }

  async watch(listener: (change: CatalogChange) => void): Promise<void> {
    this.unsubscribe ??= await this.coordination.subscribe(CHANGES_CHANNEL, (raw) => {
      try {
        listener(changeSchema.parse(JSON.parse(raw)));
      } catch (error) {
        this.onError(error, "reading a subscription change notice");
      }
    });
  }

  async close(): Promise<void> {
    const unsubscribe = this.unsubscribe;
    this.unsubscribe = undefined;
    await unsubscribe?.();
  }

  private async announce(change: CatalogChange): Promise<void> {
    await this.coordination.publish(CHANGES_CHANNEL, JSON.stringify(change));
  }
}
