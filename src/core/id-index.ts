/**
 * IdIndex: ids filed under keys (a person, a workspace, a session, a channel), the secondary index
 * a registry keeps beside its records by id. A key with no ids left is dropped, so an index over
 * records that come and go does not keep their keys.
 */

/** Ids by key; see the module comment. */
export class IdIndex {
  private readonly byKey = new Map<string, Set<string>>();

  /** File `id` under `key`. */
  add(key: string, id: string): void {
    const ids = this.byKey.get(key);
    if (ids) ids.add(id);
    else this.byKey.set(key, new Set([id]));
  }

  /** Take `id` out of `key` (the key goes with its last id). */
  remove(key: string, id: string): void {
    const ids = this.byKey.get(key);
    if (!ids) return;
    ids.delete(id);
    if (ids.size === 0) this.byKey.delete(key);
  }

  /** The ids filed under `key`, if any. */
  idsOf(key: string): ReadonlySet<string> | undefined {
    return this.byKey.get(key);
  }
}
