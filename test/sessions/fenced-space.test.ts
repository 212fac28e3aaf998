/**
 * Fencing of turn-state writes: a process whose session lease lapsed (it paused past the TTL) and
 * was taken by another process cannot write the session's record or history any more — its writes
 * are refused with a StaleFenceError and the new holder's state stays — while writes of sessions
 * nobody here holds pass through unchanged, a compare-and-set too (atomic: the store's own). Runs
 * on a real redis-server with two coordinations.
 */
import os from "node:os";
import { createClient } from "@keyv/redis";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { fencedSpace, sessionOfKey } from "../../src/sessions/fenced-space.js";
import { SessionLeases, sessionLeaseKey } from "../../src/sessions/lease-lock.js";
import { SessionRecords } from "../../src/sessions/session-records.js";
import { type Coordination, StaleFenceError } from "../../src/store/coordination/coordination.js";
import { createCoordination } from "../../src/store/coordination/create-coordination.js";
import { createStore } from "../../src/store/create-store.js";
import { HistoryLog } from "../../src/store/history-log.js";
import type { Store } from "../../src/store/store.js";
import { type RedisServer, startRedisServer } from "../support/redis-server.js";
import { sessionRecord } from "./helpers/harness.js";
import { eventually } from "../support/eventually.js";

/** The TTL of the leases the first test takes: longer than any pause, so held until lapsed. */
const LEASE_TTL_MS = 60_000;

describe("fenced turn-state writes", () => {
  let redis: RedisServer;
  let store: Store;
  let coordA: Coordination;
  let coordB: Coordination;
  /** A plain client on the same server, to expire a lease key as its TTL would (PEXPIRE). */
  let raw: ReturnType<typeof createClient>;

  beforeAll(async () => {
    redis = await startRedisServer();
    store = await createStore({ url: redis.url, dataDir: os.tmpdir() });
    coordA = await createCoordination({ url: redis.url, dataDir: os.tmpdir(), store });
    coordB = await createCoordination({ url: redis.url, dataDir: os.tmpdir(), store });
    raw = createClient({ url: redis.url });
    await raw.connect();
  }, 20_000);

  afterAll(async () => {
    if (raw?.isOpen) await raw.close();
    await coordA?.close();
    await coordB?.close();
    await store?.close();
    await redis?.stop();
  });

  const leasesFor = (coordination: Coordination, processId: string, lost: string[] = []) =>
    new SessionLeases({
      coordination,
      processId,
      // A TTL no pause outlasts and no renewal within the test: the lease is held for A's first
      // writes and B's first try, and the test lapses it in Redis itself (lapseInRedis), as a
      // paused process's lease would lapse while it still believes it holds it.
      timing: { ttlMs: LEASE_TTL_MS, renewMs: 60_000 },
      logger: pino({ level: "silent" }),
      onLost: (id) => lost.push(id),
    });

  /**
   * Expire a session's lease key in Redis now, as its TTL would (coord:lease:<key>, no prefix),
   * after checking it carries the TTL of the leases' timing (to within 30 s of a loaded host).
   */
  const lapseInRedis = async (sessionId: string, ttlMs: number) => {
    const key = `coord:lease:${sessionLeaseKey(sessionId)}`;
    const left = await raw.pTTL(key);
    expect(left, "the lease's TTL").toBeGreaterThan(ttlMs - 30_000);
    expect(left, "the lease's TTL").toBeLessThanOrEqual(ttlMs);
    expect(await raw.pExpire(key, 1)).toBe(1);
  };

  const stacksOf = (coordination: Coordination, leases: SessionLeases) => {
    const fenceOf = (id: string) => leases.fenceOf(id);
    return {
      records: new SessionRecords(fencedSpace(store.space("sessions"), "sessions", coordination, fenceOf)),
      history: new HistoryLog(fencedSpace(store.space("history"), "history", coordination, fenceOf)),
    };
  };

  it("refuses a stale holder's record and history writes once another process took the lease", async () => {
    const leasesA = leasesFor(coordA, "A");
    const leasesB = leasesFor(coordB, "B");
    const a = stacksOf(coordA, leasesA);
    const b = stacksOf(coordB, leasesB);
    const record = sessionRecord("fence1", { key: "slack:T1:C1:fence1", now: new Date() });
    const heldA = await leasesA.take("fence1");
    expect(heldA).toBeDefined();
    await a.records.put({ ...record, title: "by A" });
    const historyOfA = await a.history.open("fence1");
    await historyOfA.append({ role: "user", content: "from A" });
    expect(await leasesB.take("fence1")).toBeUndefined();

    await lapseInRedis("fence1", LEASE_TTL_MS);
    await eventually(
      async () => (await coordB.holder(sessionLeaseKey("fence1"))) === undefined,
      "A's lease to lapse",
    );
    const heldB = await leasesB.take("fence1");
    expect(heldB!.fence.fence).toBe(heldA!.fence.fence + 1);
    await b.records.put({ ...record, title: "by B" });

    // A's late writes still carry its old fence — while it still believes it holds the session (a
    // paused process, awake before its deadline), and after it gave the lease up: both are refused.
    expect(leasesA.holding("fence1")).toBe(heldA);
    const lateWritesOfA = async (what: string) => {
      expect(leasesA.fenceOf("fence1")).toEqual(heldA!.fence);
      await expect(a.records.put({ ...record, title: `A ${what}` })).rejects.toBeInstanceOf(StaleFenceError);
      await expect(historyOfA.append({ role: "user", content: what })).rejects.toBeInstanceOf(
        StaleFenceError,
      );
      expect((await b.records.get("fence1"))?.title).toBe("by B");
      expect((await b.history.open("fence1")).messages.map((m) => m.content)).toEqual(["from A"]);
    };
    await lateWritesOfA("still holding");
    await heldA!.release();
    expect(leasesA.holding("fence1")).toBeUndefined();
    await lateWritesOfA("after giving it up");
    expect(await leasesA.holderElsewhere("fence1")).toBe("B");
    await heldB!.release();
  });

  it("a lost lease is reported by the TTL at the latest; sessions not held here are written unfenced", async () => {
    const lost: string[] = [];
    const leasesA = new SessionLeases({
      coordination: coordA,
      processId: "A",
      timing: { ttlMs: 60, renewMs: 120 },
      logger: pino({ level: "silent" }),
      onLost: (id) => lost.push(id),
    });
    const held = await leasesA.take("fence2");
    expect(held?.signal.aborted).toBe(false);
    await eventually(async () => lost.includes("fence2"), "the loss to be noticed");
    expect(held?.signal.aborted).toBe(true);
    expect(leasesA.holding("fence2")).toBeUndefined();
    const { records } = stacksOf(coordA, leasesA);
    const record = sessionRecord("free1", { key: "slack:T1:C1:free1", now: new Date() });
    await records.put(record);
    expect((await records.get("free1"))?.id).toBe("free1");
  });

  it("forgets a session it let go of once its copy leaves memory, but never one it holds", async () => {
    const leases = leasesFor(coordA, "A");
    for (let i = 0; i < 50; i++) {
      const held = await leases.take(`gone${i}`);
      await held!.release();
      expect(leases.fenceOf(`gone${i}`)).toBeDefined();
      leases.forgetSession(`gone${i}`);
      expect(leases.fenceOf(`gone${i}`)).toBeUndefined();
    }
    const kept = await leases.take("kept");
    leases.forgetSession("kept");
    expect(leases.fenceOf("kept")).toEqual(kept!.fence);
    await kept!.release();
    // Taken again after forgetting, the copy counts as possibly stale (it is loaded afresh anyway).
    const again = await leases.take("gone0");
    expect(leases.mayBeStale(again!)).toBe(true);
    await again!.release();
  });

  it("passes a compare-and-set or compare-and-delete of a key no fence covers (a history's pruned mark) to the store's atomic one, with its TTL, and refuses one of a held session's key", async () => {
    const leases = leasesFor(coordA, "A");
    const held = await leases.take("fence3");
    const space = fencedSpace(store.space("history"), "history", coordA, (id) => leases.fenceOf(id));
    await space.set("pruned:fence3", { v: 1, data: { pages: 1 } });
    const read = await space.get("pruned:fence3");
    const won = await Promise.all(
      Array.from({ length: 20 }, (_, caller) =>
        space.replaceIf("pruned:fence3", read, { v: 1, data: { pages: 2 + caller } }),
      ),
    );
    expect(won.filter(Boolean)).toHaveLength(1);
    expect(await space.get("pruned:fence3")).toEqual({ v: 1, data: { pages: 2 + won.indexOf(true) } });
    await expect(space.replaceIf("head:fence3", read, { v: 1 })).rejects.toThrow(
      "fenced space: a compare-and-set of history/head:fence3 cannot carry its session's fence",
    );
    expect(await space.get("head:fence3")).toBeUndefined();
    const mark = await space.get("pruned:fence3");
    await expect(space.deleteIf("head:fence3", read)).rejects.toThrow(
      "fenced space: a compare-and-delete of history/head:fence3 cannot carry its session's fence",
    );
    expect(await space.deleteIf("pruned:fence3", read)).toBe(false);
    expect(await space.deleteIf("pruned:fence3", mark)).toBe(true);
    expect(await space.get("pruned:fence3")).toBeUndefined();
    await space.set("pruned:fence3", mark);
    await held!.release();
    const last = await space.get("pruned:fence3");
    expect(await space.replaceIf("pruned:fence3", last, { v: 1, data: { pages: 40 } }, 60_000)).toBe(true);
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 120_000 });
    try {
      expect(await space.get("pruned:fence3")).toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });

  it("maps turn-state keys to their session", () => {
    expect(sessionOfKey("sessions", "rec:s1")).toBe("s1");
    expect(sessionOfKey("sessions", "key:slack:T1:C1:1")).toBeUndefined();
    expect(sessionOfKey("sessions", "active")).toBeUndefined();
    expect(sessionOfKey("history", "head:s1")).toBe("s1");
    expect(sessionOfKey("history", "page:s1:3")).toBe("s1");
    expect(sessionOfKey("journal", "s1:call-1")).toBe("s1");
    expect(sessionOfKey("approvals", "rec:s1")).toBeUndefined();
  });
});
