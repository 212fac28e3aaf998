/**
 * Wake claims of several processes on one real redis-server: a hand-over that is rejected gives
 * its claims up, so another process's rebuilt batch wakes for the message; while a hand-over is
 * under way its claims last minutes (a process dying then leaves them behind no longer) and are
 * renewed for as long as it takes, so no other process wakes for them meanwhile, and once the
 * session accepted the wake-up they are kept for days, so no rebuilt batch wakes again. A claim
 * stored in a form that cannot be read does not hold its message's wake-up back (more in
 * wake-claim-unreadable.test.ts).
 */
import os from "node:os";
import { createClient } from "@keyv/redis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Coordination } from "../../src/store/coordination/coordination.js";
import type { KeyValueSpace, StoreNamespace } from "../../src/store/store.js";
import type { Clock } from "../../src/core/clock.js";
import { createCoordination } from "../../src/store/coordination/create-coordination.js";
import { createStore } from "../../src/store/create-store.js";
import { bufferHeadKey } from "../../src/subscriptions/channel-buffer-store-shapes.js";
import { channelKeyOf, type Subscription } from "../../src/subscriptions/subscription.js";
import { wokenKey } from "../../src/subscriptions/wake-markers.js";
import { StoreWakeClaims, WAKE_CLAIM_TAKE_MS } from "../../src/subscriptions/wake-claims.js";
import { WAKE_CLAIM_RENEW_MS } from "../../src/subscriptions/wake-hand-over.js";
import type { WakeBatch } from "../../src/subscriptions/wake-sink.js";
import { eventually } from "../support/eventually.js";
import { type RedisServer, startRedisServer } from "../support/redis-server.js";
import { spaceLike } from "../support/space-like.js";
import { WrappedStore } from "../support/wrapped-store.js";
import { ManualClock } from "../schedules/support.js";
import { ALICE, type Harness, message, openHarness } from "./support.js";

const DEBOUNCE_MS = 50;
/** Long enough that a process given it never reconciles during a test. */
const NEVER_MS = 3_600_000;
const DAY_MS = 24 * 3_600_000;

interface Process {
  readonly harness: Harness;
  readonly coordination: Coordination;
  /** Its store, whose "dedupe" space (the wake claims) says when its calls are all answered. */
  readonly store: ClaimsWatchedStore;
}

/** A store whose "dedupe" space keeps its calls under way, so a test can wait for them to end. */
class ClaimsWatchedStore extends WrappedStore {
  private readonly underWay = new Set<Promise<unknown>>();

  /** Resolves once no call on the claims is under way, nor started by what their answers ran. */
  async idle(): Promise<void> {
    do {
      await Promise.allSettled([...this.underWay]);
      await new Promise((resolve) => setImmediate(resolve));
    } while (this.underWay.size > 0);
  }

  protected wrap(namespace: StoreNamespace, inner: KeyValueSpace): KeyValueSpace {
    if (namespace !== "dedupe") return inner;
    const watch = <T>(call: Promise<T>): Promise<T> => {
      this.underWay.add(call);
      return call.finally(() => this.underWay.delete(call));
    };
    return {
      get: (key) => watch(inner.get(key)),
      set: (key, value, ttlMs) => watch(inner.set(key, value, ttlMs)),
      delete: (key) => watch(inner.delete(key)),
      setIfAbsent: (key, value, ttlMs) => watch(inner.setIfAbsent(key, value, ttlMs)),
      replaceIf: (key, expected, value, ttlMs) => watch(inner.replaceIf(key, expected, value, ttlMs)),
      deleteIf: (key, expected) => watch(inner.deleteIf(key, expected)),
    };
  }
}

/** Wake claims in `space`, where finding one that cannot be read fails the test. */
function claimsOn(space: KeyValueSpace): StoreWakeClaims {
  return new StoreWakeClaims(space, (error) => {
    throw error;
  });
}

/**
 * Another process's space over `inner` in which a step given to `afterNextRead` runs right after
 * the next read answers, before the caller goes on with what it read.
 */
function steppedAfterRead(inner: KeyValueSpace) {
  let step: (() => Promise<void>) | undefined;
  const space = spaceLike(inner, {
    get: async <T>(key: string) => {
      const read = await inner.get<T>(key);
      const now = step;
      step = undefined;
      await now?.();
      return read;
    },
  });
  return {
    space,
    afterNextRead: (next: () => Promise<void>) => {
      step = next;
    },
    /** Whether a step is still waiting for a read. */
    stepWaiting: () => step !== undefined,
  };
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

  /** A process on the Redis server (its own connections), on `clock` when given. */
  async function openProcess(clock?: Clock): Promise<Process> {
    const dataDir = os.tmpdir();
    const store = new ClaimsWatchedStore(await createStore({ url: redis.url, dataDir }));
    const coordination = await createCoordination({ url: redis.url, dataDir, store });
    const harness = await openHarness({
      store,
      settings: { debounceMs: DEBOUNCE_MS, maxWaitMs: 1_000, maxBatch: 1_000 },
      shared: { coordination, reconcileMs: NEVER_MS },
      ...(clock ? { clock } : {}),
    });
    const process = { harness, coordination, store };
    processes.push(process);
    return process;
  }

  /** The wake claims' keys on the server. */
  async function claimKeys(): Promise<string[]> {
    const keys: string[] = [];
    for await (const found of raw.scanIterator({ MATCH: "*wake-claim:*" })) keys.push(...[found].flat());
    return keys;
  }

  /** The remaining lifetimes (ms) of the wake claims on the server. */
  async function claimTtls(): Promise<number[]> {
    return Promise.all((await claimKeys()).map((key) => raw.pTTL(key)));
  }

  /**
   * `ms` pass for the wake claims on the server (each lives that much less; one whose time is up
   * is gone) and then on `clock`, whose process's claim calls this started are waited for.
   */
  async function pass(process: Process, clock: ManualClock, ms: number): Promise<void> {
    for (const key of await claimKeys()) {
      const left = await raw.pTTL(key);
      if (left > ms) await raw.pExpire(key, left - ms);
      else await raw.del(key);
    }
    clock.advance(ms);
    await process.store.idle();
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

  it("a hand-over that takes longer than a claim lasts renews it: another process does not wake for the message meanwhile", async () => {
    const clock = new ManualClock(Date.now());
    const a = await openProcess(clock);
    const timersAtOpen = clock.pending;
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
    clock.advance(DEBOUNCE_MS);
    await eventually(() => accept !== undefined, "a to claim and start the hand-over");
    await a.store.idle();

    // Two and a half claim lifetimes pass with A's hand-over still under way, a minute at a time.
    for (let passed = 0; passed < 2.5 * WAKE_CLAIM_TAKE_MS; passed += 60_000) await pass(a, clock, 60_000);
    const during = await claimTtls();
    expect(during).toHaveLength(1);
    expect(during[0]).toBeGreaterThan(WAKE_CLAIM_TAKE_MS - WAKE_CLAIM_RENEW_MS - 60_000);
    expect(a.harness.errors).toEqual([]);

    // B rebuilds the batch from the shared buffer and sees a later message: it wakes for that one only.
    const b = await openProcess();
    await b.harness.service.observe(message("later message"));
    await eventually(() => b.harness.sink.wakes.length === 1, "b's wake-up");
    await b.harness.service.settled();
    expect(b.harness.sink.wakes[0]!.batch.entries.map((e) => e.text)).toEqual(["later message"]);

    // A's hand-over is accepted at last: the message woke the subscription once, and its claim is kept.
    accept?.();
    await eventually(() => a.harness.sink.wakes.length === 1, "the accepted wake-up");
    await a.harness.service.settled();
    expect(a.harness.sink.wakes[0]!.batch.entries.map((e) => e.text)).toEqual(["prod is down"]);
    const after = await claimTtls();
    expect(after).toHaveLength(2);
    expect(Math.min(...after)).toBeGreaterThan(7 * DAY_MS);
    // No renewal is left behind to undo the keep.
    expect(clock.pending).toBe(timersAtOpen);
  });

  it("a claim on the message that cannot be read, stored without expiry, does not hold its wake-up back: it is replaced and reported", async () => {
    const clock = new ManualClock(Date.now());
    const a = await openProcess(clock);
    await a.harness.service.subscribe(ALICE, { channel: "#deploys" });
    const [subscription] = await a.harness.service.listFor(ALICE.sessionId);
    const seen = message("prod is down");
    await a.harness.service.observe(seen);
    const head = await a.store
      .space("buffers")
      .get<{ data: { epoch: string } }>(bufferHeadKey(channelKeyOf(seen)));
    // The claim key of the message's wake-up (wake-hand-over.ts), written by something else.
    const claimKey = `wake-claim:wake:${subscription?.id}:${head?.data.epoch}:1`;
    await a.store.space("dedupe").set(claimKey, { owner: 42 });

    clock.advance(DEBOUNCE_MS);
    await eventually(() => a.harness.sink.wakes.length === 1, "the wake-up");
    await a.harness.service.settled();
    expect(a.harness.errors.map(({ context }) => context)).toEqual([
      expect.stringContaining("taking wake claim"),
    ]);
    const kept = await claimTtls();
    expect(kept).toHaveLength(1);
    expect(kept[0]).toBeGreaterThan(7 * DAY_MS);
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

describe("renewing a wake claim", () => {
  it("extends this process's claim, retakes one that lapsed untaken, and refuses one held elsewhere or kept", async () => {
    const store = await createStore({ url: "memory:", dataDir: os.tmpdir() });
    const space = store.space("dedupe");
    const [mine, theirs] = [claimsOn(space), claimsOn(space)];
    expect(await mine.take("k1")).toBe("won");
    expect(await mine.renew("k1")).toBe(true);
    expect(await theirs.take("k1")).toBe("elsewhere");
    expect(await theirs.renew("k1")).toBe(false);
    // Lapsed with nobody taking it meanwhile: this process's again.
    await space.delete("wake-claim:k1");
    expect(await mine.renew("k1")).toBe(true);
    expect(await theirs.take("k1")).toBe("elsewhere");
    await mine.keep("k1");
    expect(await mine.renew("k1")).toBe(false);
    expect(await theirs.take("k1")).toBe("delivered");
    await store.close();
  });
});

describe("a process's own wake claim", () => {
  it("is one taken and not kept: a kept one reads as delivered and stays", async () => {
    const store = await createStore({ url: "memory:", dataDir: os.tmpdir() });
    try {
      const space = store.space("dedupe");
      const [mine, theirs] = [claimsOn(space), claimsOn(space)];
      expect(await mine.take("k1")).toBe("won");
      expect(await mine.take("k1")).toBe("won");
      await mine.keep("k1");
      expect(await mine.take("k1")).toBe("delivered");
      await mine.release("k1");
      expect(await theirs.take("k1")).toBe("delivered");
    } finally {
      await store.close();
    }
  });
});

describe("renewing a wake claim on Redis", () => {
  let redis: RedisServer;
  beforeEach(async () => {
    redis = await startRedisServer();
  }, 20_000);
  afterEach(async () => {
    await redis.stop();
  });

  it("never overwrites a claim another process took after this one's lapsed between the renewal's read and write", async () => {
    const dataDir = os.tmpdir();
    const [storeA, storeB] = [
      await createStore({ url: redis.url, dataDir }),
      await createStore({ url: redis.url, dataDir }),
    ];
    try {
      const [innerA, spaceB] = [storeA.space("dedupe"), storeB.space("dedupe")];
      // Process A's space: right after A reads its claim to renew it, its claim lapses and B takes it.
      const spaceA = steppedAfterRead(innerA);
      const a = claimsOn(spaceA.space);
      const b = claimsOn(spaceB);
      expect(await a.take("m1")).toBe("won");
      spaceA.afterNextRead(async () => {
        await spaceB.delete("wake-claim:m1");
        expect(await b.take("m1")).toBe("won");
      });
      expect(await a.renew("m1")).toBe(false);
      expect(spaceA.stepWaiting()).toBe(false);
      expect(await b.take("m1")).toBe("won");
      expect(await a.take("m1")).toBe("elsewhere");
      // A renewal of a claim still A's extends it.
      await b.release("m1");
      expect(await a.take("m1")).toBe("won");
      expect(await a.renew("m1")).toBe(true);
      expect(await b.take("m1")).toBe("elsewhere");
    } finally {
      await storeA.close();
      await storeB.close();
    }
  });
});

describe("a wake claim's release", () => {
  it("deletes only the claim it read as its own: not one another process took after it lapsed", async () => {
    const store = await createStore({ url: "memory:", dataDir: os.tmpdir() });
    try {
      const inner = store.space("dedupe");
      // Process A's space: right after A reads its claim to release it, its claim lapses and B takes it.
      const spaceA = steppedAfterRead(inner);
      const a = claimsOn(spaceA.space);
      const b = claimsOn(inner);
      expect(await a.take("m1")).toBe("won");
      spaceA.afterNextRead(async () => {
        await inner.delete("wake-claim:m1");
        expect(await b.take("m1")).toBe("won");
      });
      await a.release("m1");
      expect(await a.take("m1")).toBe("elsewhere");
      expect(await b.take("m1")).toBe("won");
      // A's own claim, read as its own and unchanged, is released.
      await b.release("m1");
      expect(await a.take("m1")).toBe("won");
      await a.release("m1");
      expect(await b.take("m1")).toBe("won");
    } finally {
      await store.close();
    }
  });
});
