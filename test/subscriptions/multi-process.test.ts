/**
 * Several SubscriptionServices ("processes", each with its own store and coordination
 * connections) on one real redis-server: a subscription made through one is used by another's
 * hot path (it buffers and wakes for the message it observes) and shown by its listings and
 * status lines; unsubscribing through one removes it everywhere, cancelling a batch waiting
 * elsewhere; two processes subscribing at once lose neither; an announcement lost on the way is
 * repaired by the reconciliation, while a person-facing read never waits for it.
 */
import os from "node:os";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Coordination } from "../../src/store/coordination/coordination.js";
import { createCoordination } from "../../src/store/coordination/create-coordination.js";
import { createStore } from "../../src/store/create-store.js";
import type { Caller } from "../../src/core/thread-target.js";
import { eventually } from "../support/eventually.js";
import { type RedisServer, startRedisServer } from "../support/redis-server.js";
import { ALICE, type Harness, HOME, type LossyCoordination, lossy, message, openHarness } from "./support.js";

const ALICE_OWNER = { sessionId: ALICE.sessionId, platform: "slack", userId: "UALICE" };
/** Alice in another conversation (a second thread of her DM). */
const ALICE_ELSEWHERE: Caller = {
  ...ALICE,
  sessionId: "slack:T1:CHOME:1700000000.000200",
  target: { ...HOME, thread: "1700000000.000200" },
};
const DEBOUNCE_MS = 50;
/** Long enough that a process given it never reconciles during a test. */
const NEVER_MS = 3_600_000;

interface Process {
  readonly harness: Harness;
  readonly coordination: Coordination;
  readonly lossy: LossyCoordination;
}

describe("subscriptions shared by several processes on one Redis", () => {
  let redis: RedisServer;
  let processes: Process[];

  beforeEach(async () => {
    redis = await startRedisServer();
    processes = [];
  }, 20_000);

  afterEach(async () => {
    for (const { harness, coordination } of processes) {
      await harness.close();
      await coordination.close();
    }
    await redis.stop();
  });

  /** A process on the Redis server: its own store and coordination connections. */
  async function openProcess(reconcileMs = NEVER_MS, debounceMs = DEBOUNCE_MS): Promise<Process> {
    const dataDir = os.tmpdir();
    const store = await createStore({ url: redis.url, dataDir });
    const coordination = await createCoordination({ url: redis.url, dataDir, store });
    const via = lossy(coordination);
    const harness = await openHarness({
      store,
      // A batch grows with every poll of `observe` below: never big enough to go early.
      settings: { debounceMs, maxWaitMs: Math.max(1_000, debounceMs), maxBatch: 1_000 },
      shared: { coordination: via.coordination, reconcileMs },
    });
    const process = { harness, coordination, lossy: via };
    processes.push(process);
    return process;
  }

  /** Resolves once `process` buffers a message in #deploys for a subscription (its hot path knows one). */
  const watches = (process: Process, text: string) =>
    eventually(
      async () => (await process.harness.service.observe(message(text))).status === "buffered",
      `${text}: the process to watch #deploys`,
    );

  it("a subscription made through A is used by B's hot path and shown by its listings", async () => {
    const a = await openProcess();
    const b = await openProcess();
    expect(await b.harness.service.observe(message("before"))).toEqual({ status: "ignored" });
    expect(await a.harness.service.subscribe(ALICE, { channel: "#deploys" })).toMatchObject({ ok: true });

    await watches(b, "deploy 7 failed");
    await eventually(() => b.harness.sink.wakes.length === 1, "b to wake the subscriber");
    expect(b.harness.sink.wakes[0]!.batch.entries.map((e) => e.text)).toEqual(["deploy 7 failed"]);
    await new Promise((resolve) => setTimeout(resolve, DEBOUNCE_MS * 4));
    expect(a.harness.sink.wakes).toHaveLength(0);
    expect(b.harness.sink.wakes).toHaveLength(1);

    const listed = await b.harness.service.listForPerson(ALICE_OWNER);
    expect(listed.map((s) => s.channelRef.name)).toEqual(["#deploys"]);
    expect(await b.harness.service.listForSession(ALICE.sessionId)).toEqual([
      "Subscriptions (1):",
      expect.stringContaining(`#deploys (slack, every message) — since`),
    ]);
  });

  it("unsubscribing through B removes the subscription for A, and A's waiting batch with it", async () => {
    const A_DEBOUNCE_MS = 2_000;
    const a = await openProcess(NEVER_MS, A_DEBOUNCE_MS);
    const b = await openProcess();
    await a.harness.service.subscribe(ALICE, { channel: "#deploys" });
    expect(await a.harness.service.observe(message("waiting in a's batch"))).toEqual({
      status: "buffered",
      matched: 1,
    });

    expect(await b.harness.service.remove(ALICE_OWNER, "#deploys")).toEqual({
      ok: true,
      message: "Unsubscribed from #deploys; it no longer wakes this conversation.",
    });
    // Before a's batch is due (when its wake-up would re-read the subscription): the announcement.
    await eventually(
      async () => (await a.harness.service.observe(message("after"))).status === "ignored",
      "a's hot path to forget the subscription",
      A_DEBOUNCE_MS / 2,
    );
    expect(await a.harness.service.listForPerson(ALICE_OWNER)).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, A_DEBOUNCE_MS + 200));
    await a.harness.service.settled();
    expect(a.harness.sink.wakes).toHaveLength(0);
  });

  it("two processes subscribing at once lose neither subscription", async () => {
    const a = await openProcess();
    const b = await openProcess();
    const both = await Promise.all([
      a.harness.service.subscribe(ALICE, { channel: "#deploys" }),
      b.harness.service.subscribe(ALICE_ELSEWHERE, { channel: "#deploys" }),
    ]);
    expect(both.map((outcome) => outcome.ok)).toEqual([true, true]);
    const later = await openProcess();
    expect(await later.harness.service.observe(message("seen by both"))).toMatchObject({ matched: 2 });
    expect(await later.harness.service.listForPerson(ALICE_OWNER)).toHaveLength(2);
  });

  it("a lost announcement is repaired by the reconciliation; person-facing reads re-read at once", async () => {
    const a = await openProcess();
    const b = await openProcess(200);
    const c = await openProcess();
    a.lossy.losing = true;
    await a.harness.service.subscribe(ALICE, { channel: "#deploys" });

    await watches(b, "found by b's reconciliation");
    // c reconciles only when asked: the announcement really was lost ...
    expect(await c.harness.service.observe(message("c has not heard"))).toEqual({ status: "ignored" });
    // ... yet what c shows a person is read again.
    expect((await c.harness.service.listForPerson(ALICE_OWNER)).map((s) => s.channelRef.name)).toEqual([
      "#deploys",
    ]);
    expect(await c.harness.service.observe(message("c knows now"))).toMatchObject({ status: "buffered" });

    expect(await a.harness.service.remove(ALICE_OWNER, "#deploys")).toMatchObject({ ok: true });
    await eventually(
      async () => (await b.harness.service.observe(message("gone"))).status === "ignored",
      "b's reconciliation to drop the removed subscription",
    );
  });
});
