/**
 * Wake markers: how far a subscription's wake-ups have delivered, one versioned record per
 * subscription in the subscriptions space (`woken:<id>`). Reading them is its own concept beside
 * the registry that keeps the subscriptions: the take-over sweep reads a channel's markers in one
 * batch, where a marker that cannot be read must fail only its own subscription.
 */
import { type KeyValueSpace, readRows } from "../store/store.js";
import { fromVersioned, toVersioned, type VersionedRecord } from "../store/versioned.js";
import { type BufferPosition, bufferPositionSchema } from "./buffer-entry.js";

export const WOKEN_KIND = "subscription-woken";

/** Store key of a subscription's "woken through" marker. */
export const wokenKey = (id: string) => `woken:${id}`;

/** One subscription's wake marker as read in a batch (undefined: none yet), or why it cannot be read. */
export type WokenRead =
  | { readonly ok: true; readonly woken: BufferPosition | undefined }
  | { readonly ok: false; readonly error: unknown };

/** The stored form of a marker at `position`. */
export function wokenRecord(position: BufferPosition): VersionedRecord<BufferPosition> {
  return toVersioned(WOKEN_KIND, position);
}

/** How far wake-ups of subscription `id` have delivered (undefined: none yet); throws for a marker that cannot be read. */
export async function readWoken(space: KeyValueSpace, id: string): Promise<BufferPosition | undefined> {
  return parseWoken(id, await space.get(wokenKey(id)));
}

/**
 * `readWoken` of several subscriptions, in order, in one read of the store (which rejects when it
 * fails): a marker that cannot be read — its row holds no value (not even JSON), or not a marker —
 * is given as its error, beside the others.
 */
export async function readWokenMany(
  space: KeyValueSpace,
  ids: readonly string[],
): Promise<readonly WokenRead[]> {
  const rows = await readRows(space, ids.map(wokenKey));
  return ids.map((id, at): WokenRead => {
    const row = rows[at];
    if (row !== undefined && "unreadable" in row) return { ok: false, error: row.unreadable };
    try {
      return { ok: true, woken: parseWoken(id, row?.value) };
    } catch (error) {
      return { ok: false, error };
    }
  });
}

/** A stored wake marker, checked (undefined when none is stored; throws for one that cannot be read). */
function parseWoken(id: string, raw: unknown): BufferPosition | undefined {
  if (raw === undefined) return undefined;
  return fromVersioned(raw, { kind: WOKEN_KIND, schema: bufferPositionSchema, where: id });
}
