/**
 * A store (any backend) whose next read of a task record (or of another key, by its prefix), once
 * asked to, waits after reading for the test to let it go: a change made by another process (a
 * cancel, a run's result, a create) then falls exactly between that read and the write it leads to. Every other call, the store's
 * compare-and-set among them, goes straight to the store.
 */
import type { KeyValueSpace, Store } from "../../src/store/store.js";
import { spaceLike } from "../support/space-like.js";

/** A held read: `reached` once the record was read, and `release` to let the reader go on. */
export interface HeldRead {
  readonly reached: Promise<void>;
  release(): void;
}

export interface HoldingStore {
  readonly store: Store;
  /** Hold the next read of a task record (`task:…`) made through `store`. */
  holdNextTaskRead(): HeldRead;
  /** Hold the next read through `store` of a key starting with `prefix` (`catalog:`: a catalog shard). */
  holdNextRead(prefix: string): HeldRead;
}

/** `inner` with reads that can be held (see the module comment). */
export function holdingStore(inner: Store): HoldingStore {
  let held: { prefix: string; gate: Promise<void>; reached(): void } | undefined;
  const store: Store = Object.assign(Object.create(inner) as Store, {
    space: (namespace: Parameters<Store["space"]>[0]): KeyValueSpace => {
      const space = inner.space(namespace);
      return spaceLike(space, {
        get: async <T>(key: string) => {
          const value = await space.get<T>(key);
          const hold = held !== undefined && key.startsWith(held.prefix) ? held : undefined;
          if (hold) {
            held = undefined;
            hold.reached();
            await hold.gate;
          }
          return value;
        },
        getMany: (keys) => space.getMany!(keys),
        setMany: (entries) => space.setMany!(entries),
      });
    },
    close: () => inner.close(),
  });
  const holdNextRead = (prefix: string): HeldRead => {
    let release!: () => void;
    let reached!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const reachedP = new Promise<void>((resolve) => {
      reached = resolve;
    });
    held = { prefix, gate, reached };
    return { reached: reachedP, release };
  };
  return { store, holdNextRead, holdNextTaskRead: () => holdNextRead("task:") };
}
