/**
 * Fencing of turn-state writes: a process whose session lease lapsed (it paused past the TTL) and
 * was taken by another process cannot write the session's record or history any more — its writes
 * are refused with a StaleFenceError and the new holder's state stays — while writes of sessions
 * nobody here holds pass through unchanged. Runs on a real redis-server with two coordinations.
 */
import os from "node:os";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

describe("fenced turn-state writes", () => {
  let redis: RedisServer;
  let store: Store;
  let coordA: Coordination;
  let coordB: Coordination;

  beforeAll(async () => {
    redis = await startRedisServer();
    store = await createStore({ url: redis.url, dataDir: os.tmpdir() });
    coordA = await createCoordination({ url: redis.url, dataDir: os.tmpdir(), store });
    coordB = await createCoordination({ url: redis.url, dataDir: os.tmpdir(), store });
  }, 20_000);

  afterAll(async () => {
    await coordA?.close();
    await coordB?.close();
    await store?.close();
    await redis?.stop();
  });

  const leasesFor = (coordination: Coordination, processId: string, lost: string[] = []) =>
    new SessionLeases({
      coordination,
      processId,
      // A renews rarely: its lease lapses in the store, as a paused process's would (awake, it gives
      // the lease up by its own deadline first, and keeps writing under the old fence). The TTL
      // outlasts A's first writes and B's first try on a loaded host (at 100 ms B could find the
      // lease already lapsed), and is short enough to wait out.
      timing: { ttlMs: 1_000, renewMs: 60_000 },
      logger: pino({ level: "silent" }),
      onLost: (id) => lost.push(id),
    });

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
    await a.history.append("fence1", { role: "user", content: "from A" });
    expect(await leasesB.take("fence1")).toBeUndefined();

    await eventually(
      async () => (await coordB.holder(sessionLeaseKey("fence1"))) === undefined,
      "A's lease to lapse",
    );
    const heldB = await leasesB.take("fence1");
    expect(heldB!.fence.fence).toBe(heldA!.fence.fence + 1);
    await b.records.put({ ...record, title: "by B" });

    // A's late writes still carry its old fence — whether it woke up still believing it holds the
    // session (a paused process) or, as here, gave the lease up by its deadline: both are refused.
    expect(leasesA.fenceOf("fence1")).toEqual(heldA!.fence);
    await expect(a.records.put({ ...record, title: "A again" })).rejects.toBeInstanceOf(StaleFenceError);
    await expect(a.history.append("fence1", { role: "user", content: "late" })).rejects.toBeInstanceOf(
      StaleFenceError,
    );
    expect((await b.records.get("fence1"))?.title).toBe("by B");
    expect((await b.history.load("fence1")).map((m) => m.content)).toEqual(["from A"]);
    await heldB!.release();
    await heldA!.release();
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
