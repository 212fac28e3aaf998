/**
 * Memory backend: keyv's in-memory Map, for unit tests of other modules. Nothing survives the
 * process; values are still JSON round-tripped like every other backend.
 */
import { STORE_NAMESPACES, type StoreNamespace } from "../store.js";
import { type Backend, type ErrorSink, holdsExpected, namespacedKeyv } from "./backend.js";

/** Open an empty in-memory backend; all namespaces share one Map with prefixed keys. */
export function openMemoryBackend(onError: ErrorSink): Backend {
  const map = new Map<string, unknown>();
  const spaces = new Map(STORE_NAMESPACES.map((ns) => [ns, namespacedKeyv(map, ns, true, onError)] as const));
  return {
    keyv: (namespace: StoreNamespace) => spaces.get(namespace)!,
    rowTexts: async (namespace, keys) => {
      const keyv = spaces.get(namespace)!;
      return keys.map((key) => map.get(keyv._getKeyPrefix(key)) as string | undefined);
    },
    writesInOrder: true,
    // The Map holds keyv's serialised rows under its prefixed keys; one process, no await between.
    replaceIf: async (namespace, key, expected, serialized) => {
      const row = spaces.get(namespace)!._getKeyPrefix(key);
      if (!holdsExpected(map.get(row), expected)) return false;
      map.set(row, serialized);
      return true;
    },
    deleteIf: async (namespace, key, expected) => {
      const row = spaces.get(namespace)!._getKeyPrefix(key);
      return holdsExpected(map.get(row), expected) && map.delete(row);
    },
    // Nothing to reach: the Map lives in this process (a closed store is reported by the store).
    ping: async () => undefined,
    close: async () => {
      map.clear();
    },
  };
}
