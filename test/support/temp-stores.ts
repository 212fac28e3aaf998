/**
 * Stores a test file opens under a fresh temporary directory per test: `tempStores` registers the
 * hooks that make the directory before each test and, after it, close every store opened and
 * remove the directory. The budget tests open several stores on one data directory (two
 * connections to one SQLite file, or to one Redis) to stand for several processes.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/store.js";

/** A store at `url` (the default SQLite one when undefined) on this test's data directory. */
export type OpenStore = (url: string | undefined) => Promise<Store>;

/** Register the hooks; returns how to open a store on the current test's data directory. */
export function tempStores(prefix: string): OpenStore {
  let root = "";
  const opened: Store[] = [];
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), prefix));
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
    await rm(root, { recursive: true, force: true });
  });
  return async (url) => {
    const store = await createStore({ url, dataDir: join(root, "data") });
    opened.push(store);
    return store;
  };
}
