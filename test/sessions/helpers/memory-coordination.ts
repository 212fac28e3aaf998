/**
 * A memory store and an in-process coordination over it, fresh for each test: the hooks that open
 * and close them are registered where this is called (a file's top level or a describe).
 */
import os from "node:os";
import { afterEach, beforeEach } from "vitest";
import type { Coordination } from "../../../src/store/coordination/coordination.js";
import { InProcessCoordination } from "../../../src/store/coordination/in-process-coordination.js";
import { createStore } from "../../../src/store/create-store.js";
import type { Store } from "../../../src/store/store.js";

/** The current test's store and coordination (read them inside a test or hook, not at collection). */
export interface MemoryCoordination {
  readonly store: Store;
  readonly coordination: Coordination;
}

/** Open a memory store and an InProcessCoordination before each test, close both after it. */
export function memoryCoordinationPerTest(): MemoryCoordination {
  let store: Store | undefined;
  let coordination: Coordination | undefined;
  beforeEach(async () => {
    store = await createStore({ url: "memory:", dataDir: os.tmpdir() });
    coordination = new InProcessCoordination(store);
  });
  afterEach(async () => {
    await coordination?.close();
    await store?.close();
    coordination = undefined;
    store = undefined;
  });
  return {
    get store() {
      if (!store) throw new Error("no store outside a test");
      return store;
    },
    get coordination() {
      if (!coordination) throw new Error("no coordination outside a test");
      return coordination;
    },
  };
}
