/**
 * guardWrites: a KeyValueSpace over another whose every write first passes a guard — which may
 * throw (a crashed or failing store) or wait (a slow one). Reads go straight through. A `setMany`
 * is one write (it is one commit on SQLite). The test stores below build on it.
 */
import { type KeyValueSpace, type SpaceEntry, setAll } from "../../../src/store/store.js";

/** `inner` with `guard` run before each write (its rejection fails the write untouched). */
export function guardWrites(inner: KeyValueSpace, guard: () => void | Promise<void>): KeyValueSpace {
  const write = async <T>(op: () => Promise<T>): Promise<T> => {
    await guard();
    return op();
  };
  return {
    get: (key) => inner.get(key),
    set: (key, value, ttlMs) => write(() => inner.set(key, value, ttlMs)),
    delete: (key) => write(() => inner.delete(key)),
    setIfAbsent: (key, value, ttlMs) => write(() => inner.setIfAbsent(key, value, ttlMs)),
    replaceIf: (key, expected, value, ttlMs) => write(() => inner.replaceIf(key, expected, value, ttlMs)),
    deleteIf: (key, expected) => write(() => inner.deleteIf(key, expected)),
    setMany: (entries: readonly SpaceEntry[]) => write(() => setAll(inner, entries)),
  };
}
