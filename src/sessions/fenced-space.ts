/**
 * Fenced space: a session's turn state (its record, history pages and tool-start journal) written
 * under the fence of the session's lease when this process holds it. The write is refused — and
 * fails with a StaleFenceError — once a later holder took the session, so a process that paused
 * past its lease cannot overwrite its successor's work. Keys of sessions this process does not
 * hold (a brand-new session, the thread index, a history's pruned mark) are written as they are,
 * a compare-and-set or compare-and-delete of them too (the store's own, atomic across processes);
 * either of a held session's key is refused, as no fence can carry it.
 */
import {
  type Coordination,
  type FencedWrite,
  type FenceRef,
  StaleFenceError,
} from "../store/coordination/coordination.js";
import { type KeyValueSpace, type SpaceEntry, type StoreNamespace, setAll } from "../store/store.js";

/** The session a key of one of the turn-state namespaces belongs to, if any. */
export function sessionOfKey(namespace: StoreNamespace, key: string): string | undefined {
  const parts = key.split(":");
  if (namespace === "sessions") return parts[0] === "rec" ? parts[1] : undefined;
  if (namespace === "history") return parts[0] === "head" || parts[0] === "page" ? parts[1] : undefined;
  if (namespace === "journal") return parts.length > 1 ? parts[0] : undefined;
  return undefined;
}

/** `space` with writes of held sessions' keys fenced by `fenceOf`. */
export function fencedSpace(
  space: KeyValueSpace,
  namespace: StoreNamespace,
  coordination: Coordination,
  fenceOf: (sessionId: string) => FenceRef | undefined,
): KeyValueSpace {
  const fenceFor = (key: string) => {
    const sessionId = sessionOfKey(namespace, key);
    return sessionId === undefined ? undefined : fenceOf(sessionId);
  };
  const write = async (fence: FenceRef, writes: readonly FencedWrite[]) => {
    if (!(await coordination.fencedWrite(fence, writes))) throw new StaleFenceError(fence);
  };
  /** The refusal of a conditional write of a held session's key: no fence can carry it. */
  const unfenceable = (what: string, key: string): Promise<never> =>
    Promise.reject(
      new Error(`fenced space: a ${what} of ${namespace}/${key} cannot carry its session's fence`),
    );
  const setOne = (entry: SpaceEntry): FencedWrite => ({
    op: "set",
    namespace,
    key: entry.key,
    value: entry.value,
    ...(entry.ttlMs === undefined ? {} : { ttlMs: entry.ttlMs }),
  });
  return {
    get: (key) => space.get(key),
    setIfAbsent: (key, value, ttlMs) => space.setIfAbsent(key, value, ttlMs),
    async set(key, value, ttlMs) {
      const fence = fenceFor(key);
      if (!fence) return space.set(key, value, ttlMs);
      await write(fence, [setOne({ key, value, ...(ttlMs === undefined ? {} : { ttlMs }) })]);
    },
    async delete(key) {
      const fence = fenceFor(key);
      if (!fence) return space.delete(key);
      const existed = (await space.get(key)) !== undefined;
      await write(fence, [{ op: "delete", namespace, key }]);
      return existed;
    },
    replaceIf(key, expected, value, ttlMs) {
      if (!fenceFor(key)) return space.replaceIf(key, expected, value, ttlMs);
      return unfenceable("compare-and-set", key);
    },
    deleteIf(key, expected) {
      if (!fenceFor(key)) return space.deleteIf(key, expected);
      return unfenceable("compare-and-delete", key);
    },
    async setMany(entries) {
      const fences = new Set(entries.map((e) => fenceFor(e.key)));
      const [fence] = fences;
      if (fences.size === 1) return fence ? write(fence, entries.map(setOne)) : setAll(space, entries);
      // Mixed (another session's or unfenced keys): each entry on its own, in order.
      for (const entry of entries) await this.set(entry.key, entry.value, entry.ttlMs);
    },
  };
}
