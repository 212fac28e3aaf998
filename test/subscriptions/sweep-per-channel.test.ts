/**
 * The take-over sweep of several processes (pending-sweep.ts) reads each channel's buffer once,
 * and the wake markers of the subscriptions watching it in one store call, however many there
 * are, and still gives each of them exactly the messages it was not woken for — from its own wake
 * marker, which may lie before another subscription's. A channel whose buffer or markers cannot
 * be read is reported without holding up the others, a subscription whose marker cannot be read
 * without holding up the others of its channel.
 */
import os from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import type { Caller } from "../../src/core/thread-target.js";
import type { Coordination } from "../../src/store/coordination/coordination.js";
import { createCoordination } from "../../src/store/coordination/create-coordination.js";
import { createStore } from "../../src/store/create-store.js";
import {
  getAll,
  type KeyValueSpace,
  readRows,
  type Store,
  type StoreNamespace,
} from "../../src/store/store.js";
import { bufferHeadKey } from "../../src/subscriptions/channel-buffer-store-shapes.js";
import { wokenKey } from "../../src/subscriptions/wake-markers.js";
import { type RedisServer, startRedisServer } from "../support/redis-server.js";
import { spaceLike } from "../support/space-like.js";
import { WrappedStore } from "../support/wrapped-store.js";
import { ALICE, type Harness, HOME, message, openHarness } from "./support.js";
import { SteppedClock } from "./support-stepped-clock.js";

const SETTINGS = { debounceMs: 8_000, maxWaitMs: 30_000, maxBatch: 1_000 };
const SWEEP_MS = 20_000;
/** Past the longest wait and its grace (one debounce), plus the time process A was moved on. */
const OVERDUE_MS = SETTINGS.maxWaitMs + 4 * SETTINGS.debounceMs;
const DEPLOYS_HEAD = bufferHeadKey("slack:T1:CDEPLOY");

/** Alice in another thread of her home channel: another session. */
function aliceIn(thread: string): Caller {
  const target = { ...HOME, thread };
  return { ...ALICE, sessionId: `slack:T1:CHOME:${thread}`, target };
}
const ALICE2 = aliceIn("1700000000.000200");
const ALICE3 = aliceIn("1700000000.000300");

/**
 * A store whose "buffers" space counts the reads of #deploys's buffer head (one per buffer read),
 * and fails the reads of #deploys's buffer while `failing` is set; its "subscriptions" space
 * counts the store calls that read wake markers (one however many keys a getMany or getRows reads), and
 * fails them while `markersFailing` is set.
 */
class WatchedBuffersStore extends WrappedStore {
  headReads = 0;
  markerReads = 0;
  failing = false;
  markersFailing = false;

  protected wrap(namespace: StoreNamespace, inner: KeyValueSpace): KeyValueSpace {
    if (namespace === "subscriptions") return this.markersCounted(inner);
    if (namespace !== "buffers") return inner;
    return spaceLike(inner, {
      get: async (key) => {
        if (key !== DEPLOYS_HEAD) return inner.get(key);
        this.headReads += 1;
        if (this.failing) throw new Error("the store lost #deploys");
        return inner.get(key);
      },
    });
  }

  private markersCounted(inner: KeyValueSpace): KeyValueSpace {
    return spaceLike(inner, {
      get: (key) => this.markersRead([key], () => inner.get(key)),
      getMany: (keys) => this.markersRead(keys, () => getAll(inner, keys)),
      getRows: (keys) => this.markersRead(keys, () => readRows(inner, keys)),
    });
  }

  /** `read` of `keys`, counted (and failed while `markersFailing`) when it reads a wake marker. */
  private async markersRead<T>(keys: readonly string[], read: () => Promise<T>): Promise<T> {
    if (!keys.some((key) => key.startsWith(wokenKey("")))) return read();
    this.markerReads += 1;
    if (this.markersFailing) throw new Error("the store lost the wake markers");
    return read();
  }
}

let redis: RedisServer | undefined;
const open: { harness: Harness; coordination: Coordination }[] = [];

afterEach(async () => {
  for (const process of open.splice(0)) {
    await process.harness.close().catch(() => undefined);
    await process.coordination.close().catch(() => undefined);
  }
  await redis?.stop();
  redis = undefined;
});

async function openProcess(url: string, clock: SteppedClock, wrap: (store: Store) => Store = (s) => s) {
  const inner = await createStore({ url, dataDir: os.tmpdir() });
  const coordination = await createCoordination({ url, dataDir: os.tmpdir(), store: inner });
  const harness = await openHarness({
    store: wrap(inner),
    settings: SETTINGS,
    shared: { coordination, reconcileMs: 3_600_000, sweepMs: SWEEP_MS },
    clock,
  });
  harness.directory.add("CBUILD", "builds", ["UALICE", "UBOB"]);
  const process = { harness, coordination };
  open.push(process);
  return process;
}

/**
 * Process A (whose timers run only when the test moves its clock) and process B, whose buffer
 * buffer is watched, both knowing the subscriptions of `callers`, each to the next of `channels`.
 */
async function subscribedInBoth(callers: readonly Caller[], channels: readonly string[] = ["#deploys"]) {
  redis = await startRedisServer();
  const clockA = new SteppedClock();
  const clockB = new SteppedClock();
  const a = await openProcess(redis.url, clockA);
  let counting: WatchedBuffersStore | undefined;
  const b = await openProcess(redis.url, clockB, (store) => {
    counting = new WatchedBuffersStore(store);
    return counting;
  });
  for (const [at, caller] of callers.entries()) {
    const channel = channels[at % channels.length] ?? "#deploys";
    expect(await a.harness.service.subscribe(caller, { channel })).toMatchObject({ ok: true });
  }
  for (const caller of callers) expect(await b.harness.service.listFor(caller.sessionId)).toHaveLength(1);
  if (!counting) throw new Error("process B's store was not wrapped");
  return { a, b, clockA, clockB, counting };
}

/** Move a process's clock by `ms`, then wait for what that started. */
async function run(process: { harness: Harness }, clock: SteppedClock, ms: number): Promise<void> {
  clock.advance(ms);
  await process.harness.service.settled();
}

/**
 * B's take-over sweep with its store's `flag` set, then B's next sweep without it (each sweep
 * followed by its batches' debounce): what B had woken and reported after the first, and what it
 * had woken after the next.
 */
async function sweepsWithOneFailing(
  b: { harness: Harness },
  clockB: SteppedClock,
  counting: WatchedBuffersStore,
  flag: "failing" | "markersFailing",
) {
  counting[flag] = true;
  await run(b, clockB, OVERDUE_MS);
  counting[flag] = false;
  await run(b, clockB, SETTINGS.debounceMs);
  const first = { woken: wokenBySession(b.harness), errors: b.harness.errors.map((e) => e.context) };
  await run(b, clockB, SWEEP_MS);
  await run(b, clockB, SETTINGS.debounceMs);
  return { first, wokenAfterNext: wokenBySession(b.harness) };
}

/** Texts of the wake-ups of each session, by session id. */
function wokenBySession(h: Harness): Record<string, string[][]> {
  const bySession: Record<string, string[][]> = {};
  for (const { subscription, batch } of h.sink.wakes) {
    const texts = batch.entries.map((e) => e.text);
    bySession[subscription.sessionId] = [...(bySession[subscription.sessionId] ?? []), texts];
  }
  return bySession;
}

describe("the take-over sweep", () => {
  /**
   * Each of `callers` subscribed in both processes; A buffers "deploy 9 failed" for all of them and
   * crashes: its timers never run again (its clock is never moved), its batches are lost with it.
   * B sweeps once, then its batches' debounce runs: what B's sweep read, what B woke, and its errors.
   */
  async function deploy9TakenOverByB(callers: readonly Caller[]) {
    const { a, b, clockB, counting } = await subscribedInBoth(callers);
    expect(await a.harness.service.observe(message("deploy 9 failed"))).toMatchObject({
      matched: callers.length,
    });
    counting.headReads = 0;
    counting.markerReads = 0;
    await run(b, clockB, OVERDUE_MS); // one sweep
    const sweepReads = { heads: counting.headReads, markers: counting.markerReads };
    await run(b, clockB, SETTINGS.debounceMs);
    return { sweepReads, woken: wokenBySession(b.harness), errors: b.harness.errors };
  }

  it("reads a channel's buffer once for all the subscriptions watching it", async () => {
    const { sweepReads, woken, errors } = await deploy9TakenOverByB([ALICE, ALICE2]);
    expect(sweepReads.heads).toBe(1);
    expect(woken).toEqual({
      [ALICE.sessionId]: [["deploy 9 failed"]],
      [ALICE2.sessionId]: [["deploy 9 failed"]],
    });
    expect(errors).toEqual([]);
  });

  it("reads the wake markers of a channel's subscriptions in one store call", async () => {
    const { sweepReads, woken, errors } = await deploy9TakenOverByB([ALICE, ALICE2, ALICE3]);
    expect(sweepReads.markers).toBe(1);
    expect(woken).toEqual({
      [ALICE.sessionId]: [["deploy 9 failed"]],
      [ALICE2.sessionId]: [["deploy 9 failed"]],
      [ALICE3.sessionId]: [["deploy 9 failed"]],
    });
    expect(errors).toEqual([]);
  });

  it("reports a subscription whose wake marker cannot be read and rebuilds the others of its channel", async () => {
    const { a, b, clockB, counting } = await subscribedInBoth([ALICE, ALICE2, ALICE3]);
    const [broken] = await b.harness.service.listFor(ALICE2.sessionId);
    if (!broken) throw new Error("ALICE2 has no subscription");
    await counting
      .space("subscriptions")
      .set(wokenKey(broken.id), { v: 1, kind: "subscription-woken", data: {} });
    expect(await a.harness.service.observe(message("deploy 9 failed"))).toMatchObject({ matched: 3 });

    await run(b, clockB, OVERDUE_MS);
    await run(b, clockB, SETTINGS.debounceMs);
    expect(wokenBySession(b.harness)).toEqual({
      [ALICE.sessionId]: [["deploy 9 failed"]],
      [ALICE3.sessionId]: [["deploy 9 failed"]],
    });
    expect(b.harness.errors.map((e) => e.context)).toEqual([
      `rebuilding pending wake-ups of subscription ${broken.id}`,
    ]);
  });

  it("reports a channel whose wake markers cannot be read, and rebuilds it at the next sweep", async () => {
    const { a, b, clockB, counting } = await subscribedInBoth([ALICE, ALICE2]);
    expect(await a.harness.service.observe(message("deploy 9 failed"))).toMatchObject({ matched: 2 });
    const { first, wokenAfterNext } = await sweepsWithOneFailing(b, clockB, counting, "markersFailing");
    expect(first.woken).toEqual({});
    expect(first.errors).toEqual(["rebuilding pending wake-ups in slack:T1:CDEPLOY"]);
    expect(wokenAfterNext).toEqual({
      [ALICE.sessionId]: [["deploy 9 failed"]],
      [ALICE2.sessionId]: [["deploy 9 failed"]],
    });
  });

  /**
   * ALICE is woken through deploy 2 and ALICE2 through deploy 1 in process A; with `neverWoken`,
   * ALICE3's session is busy throughout, so it has no marker. Then A crashes with deploy 3 (and
   * the held batches) in memory, and B takes over.
   */
  async function markersApart(neverWoken: boolean) {
    const callers = neverWoken ? [ALICE, ALICE2, ALICE3] : [ALICE, ALICE2];
    const { a, b, clockA, clockB } = await subscribedInBoth(callers);
    if (neverWoken) a.harness.sink.busy.add(ALICE3.sessionId);
    const matched = callers.length;
    expect(await a.harness.service.observe(message("deploy 1 failed"))).toMatchObject({ matched });
    await run(a, clockA, SETTINGS.debounceMs);
    a.harness.sink.busy.add(ALICE2.sessionId);
    expect(await a.harness.service.observe(message("deploy 2 failed"))).toMatchObject({ matched });
    await run(a, clockA, SETTINGS.debounceMs);
    expect(await a.harness.service.observe(message("deploy 3 failed"))).toMatchObject({ matched });
    expect(wokenBySession(a.harness)).toEqual({
      [ALICE.sessionId]: [["deploy 1 failed"], ["deploy 2 failed"]],
      [ALICE2.sessionId]: [["deploy 1 failed"]],
    });

    await run(b, clockB, OVERDUE_MS);
    await run(b, clockB, SETTINGS.debounceMs);
    expect(b.harness.errors).toEqual([]);
    return wokenBySession(b.harness);
  }

  it("gives each subscription of a channel the messages after its own wake marker", async () => {
    expect(await markersApart(false)).toEqual({
      [ALICE.sessionId]: [["deploy 3 failed"]],
      [ALICE2.sessionId]: [["deploy 2 failed", "deploy 3 failed"]],
    });
  });

  it("gives a subscription never woken its messages since it began watching, beside ones woken", async () => {
    expect(await markersApart(true)).toEqual({
      [ALICE.sessionId]: [["deploy 3 failed"]],
      [ALICE2.sessionId]: [["deploy 2 failed", "deploy 3 failed"]],
      [ALICE3.sessionId]: [["deploy 1 failed", "deploy 2 failed", "deploy 3 failed"]],
    });
  });

  it("reports a channel whose buffer cannot be read, and still rebuilds the other channels'", async () => {
    const { a, b, clockB, counting } = await subscribedInBoth([ALICE, ALICE2], ["#deploys", "#builds"]);
    expect(await a.harness.service.observe(message("deploy 9 failed"))).toMatchObject({ matched: 1 });
    expect(await a.harness.service.observe(message("build 4 failed", { channel: "CBUILD" }))).toMatchObject({
      matched: 1,
    });
    // A crashes, its batches lost with it; B cannot read #deploys's buffer for one sweep.
    const { first, wokenAfterNext } = await sweepsWithOneFailing(b, clockB, counting, "failing");
    expect(first.woken).toEqual({ [ALICE2.sessionId]: [["build 4 failed"]] });
    expect(first.errors).toEqual(["rebuilding pending wake-ups in slack:T1:CDEPLOY"]);
    // The next sweep reads it again.
    expect(wokenAfterNext).toEqual({
      [ALICE.sessionId]: [["deploy 9 failed"]],
      [ALICE2.sessionId]: [["build 4 failed"]],
    });
  });
});
