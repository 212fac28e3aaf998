/**
 * spaceLike: a KeyValueSpace that is another one but for the methods a test replaces (to fail,
 * race, count or hold a call). A store's spaces are class instances, whose methods a spread does
 * not copy, so each method is passed on by name. getMany and setMany are left out unless given:
 * callers then fall back to get and set, one call per key, where a replaced get or set sees each.
 */
import type { KeyValueSpace } from "../../src/store/store.js";

/** `inner`, with the methods in `replaced` in place of its own. */
export function spaceLike(inner: KeyValueSpace, replaced: Partial<KeyValueSpace> = {}): KeyValueSpace {
  return {
    get: (key) => inner.get(key),
    set: (key, value, ttlMs) => inner.set(key, value, ttlMs),
    delete: (key) => inner.delete(key),
    setIfAbsent: (key, value, ttlMs) => inner.setIfAbsent(key, value, ttlMs),
    replaceIf: (key, expected, value, ttlMs) => inner.replaceIf(key, expected, value, ttlMs),
    deleteIf: (key, expected) => inner.deleteIf(key, expected),
    ...replaced,
  };
}
