/**
 * "new" moves a thread's standing items to its new session, and the move survives what can cut it
 * short: the new session's record names the old one (written with the switch), so a process that
 * died between the switch and the move has it finished by the next process that loads the thread;
 * a move that fails is tried again, and one that keeps failing is told to the thread once; a "new"
 * typed while it still fails carries the unfinished move on to the newest session.
 */
import { afterEach, describe, expect, it } from "vitest";
import { sessionKeyOf } from "../../src/core/thread-target.js";
import { MOVE_FAILED_TEXT } from "../../src/sessions/standing-item-moves.js";
import { itemsFromReplacing, MAX_ITEM_SOURCES } from "../../src/sessions/session-record.js";
import { SessionRecords } from "../../src/sessions/session-records.js";
import type { Clock } from "../../src/core/clock.js";
import type { Store } from "../../src/store/store.js";
import { manualClock } from "../support/manual-clock.js";
import { textStep } from "../support/scripted-provider.js";
import {
  ANA,
  type Harness,
  makeHarness,
  message,
  openStore,
  sessionRecord,
  tempDir,
  thread,
} from "./helpers/harness.js";

const harnesses: Harness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.manager.drain(0);
});

const records = (store: Store) => new SessionRecords(store.space("sessions"));
const currentId = async (store: Store) => (await records(store).currentId(sessionKeyOf(thread())))!;

/** A session manager on `store` whose modules' move is `move`, its retries timed on `clock` if given. */
async function open(
  store: Store,
  move: (oldId: string, newId: string) => Promise<void>,
  clock?: Clock,
): Promise<Harness> {
  const h = await makeHarness({
    store,
    steps: [textStep("hi")],
    overrides: { onSessionReplaced: move, itemMoveRetryMs: [0, 0], ...(clock ? { clock } : {}) },
  });
  harnesses.push(h);
  return h;
}

/** A move failing on each attempt `fails` names: it counts its attempts and tells the first failure. */
function flakyMove(fails: (attempt: number) => boolean) {
  let failed!: () => void;
  const flaky = {
    attempts: 0,
    firstFailure: new Promise<void>((resolve) => {
      failed = resolve;
    }),
    move: async (): Promise<void> => {
      flaky.attempts += 1;
      if (!fails(flaky.attempts)) return;
      failed();
      throw new Error("store unavailable");
    },
  };
  return flaky;
}

describe("moving a thread's standing items on 'new'", () => {
  it("a move cut short by the process dying is finished by the next process that loads the thread", async () => {
    const store = await openStore(tempDir());
    let moving: ((oldId: string) => void) | undefined;
    const reached = new Promise<string>((resolve) => {
      moving = resolve;
    });
    // The first process dies in the middle of the move: its move never ends.
    const first = await open(store, (oldId) => {
      moving?.(oldId);
      return new Promise<void>(() => undefined);
    });
    await first.manager.receive(message("hi", { user: ANA }));
    await first.manager.idle();
    const oldId = await currentId(store);
    void first.manager.command(thread(), ANA, "new", []);
    expect(await reached).toBe(oldId);
    const newId = await currentId(store);
    expect(newId).not.toBe(oldId);
    expect((await records(store).get(newId))?.itemsFrom).toEqual({ sessionId: oldId });

    const moves: [string, string][] = [];
    const second = await open(store, async (from, to) => {
      moves.push([from, to]);
    });
    // "status" waits for the move it finds unfinished, so it lists the items.
    expect(await second.manager.command(thread(), ANA, "status", [])).toContain(newId);
    expect((await records(store).get(newId))?.itemsFrom).toBeUndefined();
    expect(moves).toEqual([[oldId, newId]]);
    // Done: loading the session again moves nothing more.
    const third = await open(store, async (from, to) => {
      moves.push([from, to]);
    });
    await third.manager.command(thread(), ANA, "status", []);
    expect(moves).toEqual([[oldId, newId]]);
  });

  it("a failed move is tried again; one that keeps failing is told to the thread once, and finished at the next load", async () => {
    const store = await openStore(tempDir());
    let failures = 0;
    const failing = await open(store, async () => {
      failures += 1;
      if (failures !== 2) throw new Error("store unavailable");
    });
    await failing.manager.receive(message("hi", { user: ANA }));
    await failing.manager.idle();
    // The first attempt fails, the retry succeeds: nothing to tell.
    await failing.manager.command(thread(), ANA, "new", []);
    expect(failures).toBe(2);
    expect((await records(store).get(await currentId(store)))?.itemsFrom).toBeUndefined();
    const notices = () => failing.outputs.for(thread()).texts.filter((t) => t === MOVE_FAILED_TEXT);
    expect(notices()).toEqual([]);

    // Every attempt fails: three tries, one notice, and the mark stays for the next load.
    failures = 2;
    const renewed = await failing.manager.command(thread(), ANA, "new", []);
    expect(renewed).toMatch(/^Started a new session/);
    expect(failures).toBe(5);
    expect(notices()).toEqual([MOVE_FAILED_TEXT]);
    const newId = await currentId(store);
    expect((await records(store).get(newId))?.itemsFrom).toMatchObject({ told: true });

    // A restart whose move fails again does not tell the thread again; one whose move works clears it.
    const again = await open(store, async () => {
      throw new Error("still unavailable");
    });
    await again.manager.command(thread(), ANA, "status", []);
    expect(again.outputs.for(thread()).texts.filter((t) => t === MOVE_FAILED_TEXT)).toEqual([]);
    const moves: string[] = [];
    const fixed = await open(store, async (from) => {
      moves.push(from);
    });
    await fixed.manager.command(thread(), ANA, "status", []);
    expect((await records(store).get(newId))?.itemsFrom).toBeUndefined();
    expect(moves).toHaveLength(1);
  });

  it("'new' typed again while the move keeps failing carries it on: the first session's items reach the newest one", async () => {
    const store = await openStore(tempDir());
    const failing = await open(store, async () => {
      throw new Error("store unavailable");
    });
    await failing.manager.receive(message("hi", { user: ANA }));
    await failing.manager.idle();
    const a = await currentId(store);
    await failing.manager.command(thread(), ANA, "new", []);
    const b = await currentId(store);
    await failing.manager.command(thread(), ANA, "new", []);
    const c = await currentId(store);
    expect((await records(store).get(c))?.itemsFrom).toEqual({ sessionId: b, earlier: [a], told: true });
    const notices = failing.outputs.for(thread()).texts.filter((t) => t === MOVE_FAILED_TEXT);
    expect(notices).toHaveLength(2);

    // The next process's store moves the first session's items but not yet the second's.
    const moves: [string, string][] = [];
    const half = await open(store, async (from, to) => {
      if (from === b) throw new Error("still unavailable");
      moves.push([from, to]);
    });
    await half.manager.command(thread(), ANA, "status", []);
    expect(moves).toEqual([[a, c]]);
    expect((await records(store).get(c))?.itemsFrom).toEqual({ sessionId: b, told: true });
    expect(half.outputs.for(thread()).texts.filter((t) => t === MOVE_FAILED_TEXT)).toEqual([]);

    const fixed = await open(store, async (from, to) => {
      moves.push([from, to]);
    });
    await fixed.manager.command(thread(), ANA, "status", []);
    expect(moves).toEqual([
      [a, c],
      [b, c],
    ]);
    expect((await records(store).get(c))?.itemsFrom).toBeUndefined();
  });

  it("a failed move's retry waits on the injected clock", async () => {
    const store = await openStore(tempDir());
    const clock = manualClock();
    let paused!: (ms: number) => void;
    const pausing = new Promise<number>((resolve) => {
      paused = resolve;
    });
    const flaky = flakyMove((attempt) => attempt === 1);
    // Real 0 ms pauses if the clock were not used: the command would end without it.
    const h = await open(store, flaky.move, {
      ...clock,
      setTimer: (callback, ms) => {
        paused(ms);
        return clock.setTimer(callback, ms);
      },
    });
    await h.manager.receive(message("hi", { user: ANA }));
    await h.manager.idle();
    const renewed = h.manager.command(thread(), ANA, "new", []);
    await Promise.race([pausing, renewed]);
    expect({ attempts: flaky.attempts, pending: clock.pending() }).toEqual({ attempts: 1, pending: 1 });
    clock.fire();
    expect(await renewed).toMatch(/^Started a new session/);
    expect(flaky.attempts).toBe(2);
    expect((await records(store).get(await currentId(store)))?.itemsFrom).toBeUndefined();
  });

  it("shutdown stops a failing move's retries: nothing is tried again, nobody is told, the mark stays for the next load", async () => {
    const store = await openStore(tempDir());
    const clock = manualClock();
    const flaky = flakyMove(() => true);
    const h = await open(store, flaky.move, clock);
    await h.manager.receive(message("hi", { user: ANA }));
    await h.manager.idle();
    const oldId = await currentId(store);
    const renewed = h.manager.command(thread(), ANA, "new", []);
    await flaky.firstFailure;
    await h.manager.drain(0);
    expect(await renewed).toMatch(/^Started a new session/);
    clock.fire();
    await h.manager.idle();
    expect({ attempts: flaky.attempts, pending: clock.pending() }).toEqual({ attempts: 1, pending: 0 });
    expect(h.outputs.for(thread()).texts.filter((t) => t === MOVE_FAILED_TEXT)).toEqual([]);
    expect((await records(store).get(await currentId(store)))?.itemsFrom).toEqual({ sessionId: oldId });
  });

  it("a carried mark names at most MAX_ITEM_SOURCES sessions: the oldest ones and the one just replaced", () => {
    const older = Array.from({ length: MAX_ITEM_SOURCES + 3 }, (_, i) => `s${i}`);
    const previous = sessionRecord("p", {
      itemsFrom: { sessionId: "s-last", earlier: older },
    });
    const { itemsFrom, dropped } = itemsFromReplacing(previous);
    expect(itemsFrom).toEqual({ sessionId: "p", earlier: older.slice(0, MAX_ITEM_SOURCES - 1) });
    expect(dropped).toEqual([...older.slice(MAX_ITEM_SOURCES - 1), "s-last"]);
    // A mark already naming the replaced session, told or not, carries neither twice nor `told`.
    expect(itemsFromReplacing(sessionRecord("p", { itemsFrom: { sessionId: "p", told: true } }))).toEqual({
      itemsFrom: { sessionId: "p" },
      dropped: [],
    });
  });
});
