/**
 * A matched message's batch waits in the memory of the process that saw it. With two processes on
 * one Redis, when that one stops before the batch goes — cleanly or by crashing — the one still
 * running takes the batch over once it is overdue (pending-sweep.ts), and wakes the subscriber
 * for it once; a batch not overdue yet is left to the process that holds it.
 */
import os from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import type { Coordination } from "../../src/store/coordination/coordination.js";
import { createCoordination } from "../../src/store/coordination/create-coordination.js";
import { createStore } from "../../src/store/create-store.js";
import { type RedisServer, startRedisServer } from "../support/redis-server.js";
import { ALICE, type Harness, message, openHarness } from "./support.js";
import { SteppedClock } from "./support-stepped-clock.js";

const SETTINGS = { debounceMs: 8_000, maxWaitMs: 30_000, maxBatch: 1_000 };
/** Shorter than the age at which a batch is overdue, so a sweep can find it not overdue yet. */
const SWEEP_MS = 20_000;
/** Past the longest wait and its grace (one debounce): a batch this old is overdue. */
const OVERDUE_MS = SETTINGS.maxWaitMs + SETTINGS.debounceMs + 1_000;

let redis: RedisServer | undefined;
const open: { harness: Harness; coordination: Coordination; stopped: boolean }[] = [];

afterEach(async () => {
  for (const process of open.splice(0)) {
    if (!process.stopped) await process.harness.close().catch(() => undefined);
    await process.coordination.close().catch(() => undefined);
  }
  await redis?.stop();
  redis = undefined;
});

async function openProcess(url: string, clock: SteppedClock, wakesPerHour = 12) {
  const store = await createStore({ url, dataDir: os.tmpdir() });
  const coordination = await createCoordination({ url, dataDir: os.tmpdir(), store });
  const harness = await openHarness({
    store,
    settings: { ...SETTINGS, wakesPerHour },
    shared: { coordination, reconcileMs: 3_600_000, sweepMs: SWEEP_MS },
    clock,
  });
  const process = { harness, coordination, stopped: false };
  open.push(process);
  return process;
}

/**
 * Processes A and B on one Redis, each on its own clock (its timers run only when the test moves
 * it), both knowing Alice's subscription to #deploys.
 */
async function subscribedInBoth(wakesPerHour?: number) {
  redis = await startRedisServer();
  const clockA = new SteppedClock();
  const clockB = new SteppedClock();
  const a = await openProcess(redis.url, clockA, wakesPerHour);
  const b = await openProcess(redis.url, clockB, wakesPerHour);
  expect(await a.harness.service.subscribe(ALICE, { channel: "#deploys" })).toMatchObject({ ok: true });
  expect(await b.harness.service.listFor(ALICE.sessionId)).toHaveLength(1);
  return { a, b, clockA, clockB };
}

/** A (whose timers run only when the test moves its clock) has a match waiting; B runs on. */
async function matchWaitingInA(wakesPerHour?: number) {
  const { a, b, clockA, clockB } = await subscribedInBoth(wakesPerHour);
  expect(await a.harness.service.observe(message("deploy 9 failed"))).toEqual({
    status: "buffered",
    matched: 1,
  });
  return { a, b, clockA, clockB };
}

/** Move B's clock by `ms`, then wait for what that started. */
async function runB(b: { harness: Harness }, clock: SteppedClock, ms: number): Promise<void> {
  clock.advance(ms);
  await b.harness.service.settled();
}

const texts = (h: Harness) => h.sink.wakes.map((w) => w.batch.entries.map((e) => e.text));

describe("a wake-up waiting in a process that stops", () => {
  it("is delivered once by the process still running after a clean stop, once overdue", async () => {
    const { a, b, clockB } = await matchWaitingInA();
    await a.harness.service.shutdown();
    a.stopped = true;

    // Not overdue at B's first sweep: left to A (which could still be delivering it).
    await runB(b, clockB, SWEEP_MS);
    await runB(b, clockB, SETTINGS.debounceMs);
    expect(texts(b.harness)).toEqual([]);

    await runB(b, clockB, SWEEP_MS); // overdue now: taken over
    await runB(b, clockB, SETTINGS.debounceMs);
    expect(texts(b.harness)).toEqual([["deploy 9 failed"]]);

    // Later sweeps find it woken for.
    await runB(b, clockB, SWEEP_MS);
    await runB(b, clockB, SETTINGS.maxWaitMs);
    expect(texts(b.harness)).toEqual([["deploy 9 failed"]]);
    expect(a.harness.sink.wakes).toEqual([]);
  });

  it("is delivered by the process still running when the one holding it crashed", async () => {
    const { a, b, clockB } = await matchWaitingInA();
    // A crashed: its timers never run again (its clock is never moved), its batch is lost with it.
    await runB(b, clockB, OVERDUE_MS);
    await runB(b, clockB, SETTINGS.debounceMs);
    expect(texts(b.harness)).toEqual([["deploy 9 failed"]]);
    expect(a.harness.sink.wakes).toEqual([]);
  });

  it("is delivered by the process still running when that one had swept the channel before the message came", async () => {
    const { a, b, clockA, clockB } = await subscribedInBoth();
    // B sweeps while nothing is buffered: it must not keep believing the channel empty.
    await runB(b, clockB, SWEEP_MS);
    const at = new Date(clockA.now()).toISOString();
    expect(await a.harness.service.observe(message("deploy 9 failed", { at }))).toMatchObject({ matched: 1 });

    // A crashes (its clock never moves again); B's later sweeps find the batch overdue.
    await runB(b, clockB, OVERDUE_MS);
    await runB(b, clockB, SETTINGS.debounceMs);
    await runB(b, clockB, SWEEP_MS);
    await runB(b, clockB, SETTINGS.debounceMs);
    expect(texts(b.harness)).toEqual([["deploy 9 failed"]]);
  });

  it("of a message the platform delivered late is left to the process holding it while freshly buffered", async () => {
    const { a, b, clockA, clockB } = await subscribedInBoth();
    // Ten minutes on, a message sent five minutes ago (after subscribing) is handed to A only now:
    // A's batch of it is fresh.
    clockA.advance(600_000);
    await runB(b, clockB, 600_000);
    const at = new Date(clockA.now() - 300_000).toISOString();
    expect(await a.harness.service.observe(message("deploy 9 failed", { at }))).toMatchObject({ matched: 1 });

    await runB(b, clockB, SWEEP_MS);
    await runB(b, clockB, SETTINGS.debounceMs);
    expect(texts(b.harness)).toEqual([]);
    clockA.advance(SETTINGS.debounceMs);
    await a.harness.service.settled();
    expect(texts(a.harness)).toEqual([["deploy 9 failed"]]);
  });

  it("a process only slow, whose batch was taken over meanwhile, gives its wake-up slot back", async () => {
    const { a, b, clockA, clockB } = await matchWaitingInA(2);
    await runB(b, clockB, OVERDUE_MS);
    await runB(b, clockB, SETTINGS.debounceMs);
    expect(texts(b.harness)).toEqual([["deploy 9 failed"]]);

    // A's batch goes at last: its message was woken for by B, so no wake-up, and no slot used.
    clockA.advance(SETTINGS.maxWaitMs);
    await a.harness.service.settled();
    expect(a.harness.sink.wakes).toEqual([]);

    // The second of the two wake-ups an hour is still there for the next message.
    expect(await b.harness.service.observe(message("deploy 10 failed"))).toMatchObject({ matched: 1 });
    await runB(b, clockB, SETTINGS.debounceMs);
    expect(texts(b.harness)).toEqual([["deploy 9 failed"], ["deploy 10 failed"]]);
  });
});
