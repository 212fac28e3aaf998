/**
 * Wake claims of several processes on one real redis-server: a hand-over that is rejected gives
 * its claims up, so another process's rebuilt batch wakes for the message; while a hand-over is
 * under way its claims last minutes (a process dying then leaves them behind no longer), and once
 * the session accepted the wake-up they are kept for days, so no rebuilt batch wakes again.
 */
import os from "node:os";
import { createClient } from "@keyv/redis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Coordination } from "../../src/store/coordination/coordination.js";
import { createCoordination } from "../../src/store/coordination/create-coordination.js";
import { createStore } from "../../src/store/create-store.js";
import type { Subscription } from "../../src/subscriptions/subscription.js";
import { wokenKey } from "../../src/subscriptions/subscription-registry.js";
import { WAKE_CLAIM_TAKE_MS } from "../../src/subscriptions/wake-claims.js";
import type { WakeBatch } from "../../src/subscriptions/wake-sink.js";
import { eventually } from "../support/eventually.js";
import { type RedisServer, startRedisServer } from "../support/redis-server.js";
import { ALICE, type Harness, message, openHarness } from "./support.js";

const DEBOUNCE_MS = 50;
/** Long enough that a process given it never reconciles during a test. */
const NEVER_MS = 3_600_000;
const DAY_MS = 24 * 3_600_000;

interface Process {
  readonly harness: Harness;
  readonly coordination: Coordination;
}

describe("wake claims of several processes on one Redis", () => {
  let redis: RedisServer;
  let raw: ReturnType<typeof createClient>;
  let processes: Process[];
  const unblocks: (() => void)[] = [];

  beforeEach(async () => {
    redis = await startRedisServer();
    raw = createClient({ url: redis.url });
    await raw.connect();
    processes = [];
  }, 20_000);

  afterEach(async () => {
    for (const unblock of unblocks.splice(0)) unblock();
    for (const { harness, coordination } of processes) {
      await harness.close();
      await coordination.close();
    }
    await raw.close();
    await redis.stop();
  });

  async function openProcess(): Promise<Process> {
    const dataDir = os.tmpdir();
    const store = await createStore({ url: redis.url, dataDir });
    const coordination = await createCoordination({ url: redis.url, dataDir, store });
    const harness = await openHarness({
      store,
      settings: { debounceMs: DEBOUNCE_MS, maxWaitMs: 1_000, maxBatch: 1_000 },
      shared: { coordination, reconcileMs: NEVER_MS },
    });
    const process = { harness, coordination };
    processes.push(process);
    return process;
  }

  /** The remaining lifetimes (ms) of the wake claims on the server. */
  async function claimTtls(): Promise<number[]> {
    const keys: string[] = [];
    for await (const found of raw.scanIterator({ MATCH: "*wake-claim:*" })) keys.push(...[found].flat());
    return Promise.all(keys.map((key) => raw.pTTL(key)));
  }

  it("a rejected hand-over gives its claim up: another process's rebuilt batch wakes for the message", async () => {
    const a = await openProcess();
    a.harness.sink.wake = async () => {
      throw new Error("the session layer is shutting down");
    };
    await a.harness.service.subscribe(ALICE, { channel: "#deploys" });
    await a.harness.service.observe(message("prod is down"));
    await eventually(() => a.harness.errors.length === 1, "the rejected hand-over to be reported");
    // A stops before its own retry; B opens and rebuilds the batch from the shared buffer.
    await a.harness.service.shutdown();
    const b = await openProcess();
    await b.harness.service.observe(message("later message"));
    await eventually(() => b.harness.sink.wakes.length === 1, "b's wake-up");
    await b.harness.service.settled();
    expect(b.harness.sink.wakes[0]!.batch.entries.map((e) => e.text)).toEqual([
      "prod is down",
      "later message",
    ]);
  });

  it("a claim lasts minutes while its hand-over is under way, and days once the wake-up was accepted", async () => {
    const a = await openProcess();
    const realWake = a.harness.sink.wake.bind(a.harness.sink);
    let accept: (() => void) | undefined;
    a.harness.sink.wake = async (subscription: Subscription, batch: WakeBatch) => {
      await new Promise<void>((resolve) => {
        accept = resolve;
        unblocks.push(resolve);
      });
      return realWake(subscription, batch);
    };
    await a.harness.service.subscribe(ALICE, { channel: "#deploys" });
    await a.harness.service.observe(message("prod is down"));
    await eventually(() => accept !== undefined, "a to claim and start the hand-over");
    const during = await claimTtls();
    expect(during).toHaveLength(1);
    expect(during[0]).toBeGreaterThan(0);
    expect(during[0]).toBeLessThanOrEqual(WAKE_CLAIM_TAKE_MS);

    accept?.();
    await eventually(() => a.harness.sink.wakes.length === 1, "the accepted wake-up");
    await a.harness.service.settled();
    const after = await claimTtls();
    expect(after).toHaveLength(1);
    expect(after[0]).toBeGreaterThan(7 * DAY_MS);

    // A second process rebuilding the batch (as after a marker lost) does not wake for it again.
    await a.harness.store.space("subscriptions").delete(wokenKey(a.harness.sink.wakes[0]!.subscription.id));
    const b = await openProcess();
    await b.harness.service.observe(message("later message"));
    await eventually(() => b.harness.sink.wakes.length === 1, "b's wake-up");
    await b.harness.service.settled();
    expect(b.harness.sink.wakes[0]!.batch.entries.map((e) => e.text)).toEqual(["later message"]);
  });
});
