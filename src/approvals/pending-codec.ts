/**
 * Stored form of pending items: the schema-versioned envelope ("pending-item", v1) around a
 * validated item. Reading an unknown or newer version fails loudly with a StoredDataError.
 */
import { fromVersioned, toVersioned, type VersionedRecord } from "../store/versioned.js";
import { type PendingItem, pendingItemSchema } from "./pending-item.js";

export const PENDING_RECORD_KIND = "pending-item";

/** Wrap an item for the store. */
export function encodePending(item: PendingItem): VersionedRecord<PendingItem> {
  return toVersioned(PENDING_RECORD_KIND, item);
}

/** Read an item back; throws a StoredDataError naming the problem. */
export function decodePending(raw: unknown): PendingItem {
  return fromVersioned(raw, {
    kind: PENDING_RECORD_KIND,
    schema: pendingItemSchema,
    where: "pending approval / question",
  }) as PendingItem;
}
