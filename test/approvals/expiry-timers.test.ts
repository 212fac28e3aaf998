/**
 * Expiry timers across processes: two processes on one real redis-server both arm the timer of
 * the same pending item; the claim in the store lets exactly one of them expire it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type ClaimOnce, ExpiryTimers } from "../../src/approvals/expiry-timers.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/store.js";
import { type RedisServer, startRedisServer } from "../support/redis-server.js";

let redis: RedisServer;
let dataDir = "";
const stores: Store[] = [];
beforeAll(async () => {
  redis = await startRedisServer();
  dataDir = mkdtempSync(path.join(os.tmpdir(), "expiry-claims-"));
});
afterAll(async () => {
  for (const store of stores) await store.close();
  await redis.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** One "process": its own connection to the shared Redis, claiming through the store. */
async function processClaims(): Promise<ClaimOnce> {
  const store = await createStore({ url: redis.url, dataDir });
  stores.push(store);
  const space = store.space("schedules");
  return (key, ttlMs) => space.setIfAbsent(key, { at: Date.now() }, ttlMs);
}

describe("ExpiryTimers", () => {
  it("without a claim, expires the item in this process", async () => {
    const expired: string[] = [];
    const timers = new ExpiryTimers(
      () => new Date(),
      (id) => expired.push(id),
    );
    timers.arm("p1", new Date(Date.now() + 20).toISOString());
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(expired).toEqual(["p1"]);
  });

  it("with several processes on one Redis, exactly one expires each item", async () => {
    const expired: string[] = [];
    const processes = await Promise.all([processClaims(), processClaims(), processClaims()]);
    const at = new Date(Date.now() + 50).toISOString();
    const all = processes.map(
      (claim, n) =>
        new ExpiryTimers(
          () => new Date(),
          (id) => expired.push(`${id}@${n}`),
          claim,
        ),
    );
    for (const timers of all) for (const id of ["a", "b", "c", "d"]) timers.arm(id, at);
    const deadline = Date.now() + 5_000;
    while (expired.length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(expired.map((e) => e.split("@")[0]).sort()).toEqual(["a", "b", "c", "d"]);
  });

  it("a claim that fails is reported, and the item is not expired by this process", async () => {
    const expired: string[] = [];
    const failures: string[] = [];
    const timers = new ExpiryTimers(
      () => new Date(),
      (id) => expired.push(id),
      () => Promise.reject(new Error("store down")),
      (error, id) => failures.push(`${id}: ${(error as Error).message}`),
    );
    timers.arm("p1", new Date().toISOString());
    const deadline = Date.now() + 2_000;
    while (failures.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(failures).toEqual(["p1: store down"]);
    expect(expired).toEqual([]);
  });

  it("a claim that failed is tried again under a key of its own, until one lands; a cleared item's is not", async () => {
    vi.useFakeTimers();
    try {
      const expired: string[] = [];
      const keys: string[] = [];
      let down = 2;
      const timers = new ExpiryTimers(
        () => new Date(),
        (id) => expired.push(id),
        async (key) => {
          keys.push(key);
          if (down-- > 0) throw new Error("store down");
          return true;
        },
      );
      const at = new Date(Date.now() + 10).toISOString();
      timers.arm("p1", at);
      await vi.advanceTimersByTimeAsync(20);
      expect(expired).toEqual([]);
      // Every process's claim failed just then: without a retry the item stayed open for good.
      await vi.advanceTimersByTimeAsync(60_000);
      expect(expired).toEqual(["p1"]);
      expect(keys).toEqual([`expiry:p1:${at}`, `expiry:p1:${at}:retry-1`, `expiry:p1:${at}:retry-2`]);

      down = 1;
      timers.arm("p2", new Date(Date.now() + 10).toISOString());
      await vi.advanceTimersByTimeAsync(20);
      timers.clear("p2");
      await vi.advanceTimersByTimeAsync(120_000);
      expect(expired).toEqual(["p1"]);
      expect(keys).toHaveLength(4);
    } finally {
      vi.useRealTimers();
    }
  });
});
