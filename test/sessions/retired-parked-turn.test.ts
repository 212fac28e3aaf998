/**
 * "new" retires a thread's session. A turn of it suspended in the store (parked at a card when the
 * process stopped) must not come back: `new` ends it as stopped (its record keeps no marker), and
 * the next process's start passes over any session that is no longer its thread's current one.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createStore } from "../../src/store/create-store.js";
import { SessionRecords, type SharedRecords } from "../../src/sessions/session-records.js";
import { ScriptedProvider, textStep, toolStep } from "../support/scripted-provider.js";
import { engineFactory } from "../support/session-stack.js";
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
import { sessionTestRegistry, ToolRuns } from "./helpers/test-tools.js";
import type { ScriptedStep } from "../support/scripted-provider.js";

const defaults = {
  model: "m",
  provider: "scripted",
  mode: "interactive" as const,
  maxSteps: 10,
  queueMode: "followup" as const,
};

function overrides(runs: ToolRuns, steps: ScriptedStep[]) {
  return { defaults, createEngine: engineFactory(new ScriptedProvider(steps), sessionTestRegistry(runs)) };
}

const open: Harness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) {
    await h.manager.drain(1_000);
    await h.store.close();
  }
});

/** A process whose turn parks at a card for c1, stopped; then one that starts a new session in the thread. */
async function parkedThenRenewed(dataDir: string, runs: ToolRuns): Promise<string> {
  const first = await makeHarness({
    dataDir,
    runs,
    overrides: overrides(runs, [toolStep(["c1", "write_note", { text: "x" }])]),
  });
  await first.manager.start();
  await first.manager.receive(message("tidy up"));
  const out = first.outputs.for(thread());
  await first.outputs.until(() => out.latestCards[0], "card");
  expect(await first.manager.drain(1_000)).toEqual({ finished: 0, interrupted: 0, parked: 1 });
  const [oldId] = await new SessionRecords(first.store.space("sessions")).activeIds();
  await first.store.close();
  const mid = await makeHarness({ dataDir, runs, overrides: overrides(runs, []) });
  await mid.manager.start();
  expect(await mid.manager.command(thread(), ANA, "new", [])).toMatch(/^Started a new session/);
  await mid.manager.drain(1_000);
  await mid.store.close();
  return oldId!;
}

describe("a retired session's suspended turn", () => {
  it("after `new` and a restart, the retired session is not loaded nor its turn resumed", async () => {
    const dataDir = tempDir();
    const runs = new ToolRuns();
    const oldId = await parkedThenRenewed(dataDir, runs);
    const stored = await openStore(dataDir);
    // `new` ended the retired session's suspended turn as stopped: its record holds no marker.
    expect((await new SessionRecords(stored.space("sessions")).get(oldId))?.pendingTurn).toBeUndefined();
    await stored.close();
    const next = await makeHarness({ dataDir, runs, overrides: overrides(runs, [textStep("carrying on")]) });
    open.push(next);
    await next.manager.start();
    await next.manager.idle();
    expect({
      engines: next.engines.length,
      ran: runs.count("c1"),
      posted: next.outputs.for(thread()).closedTurns.length,
    }).toEqual({
      engines: 0,
      ran: 0,
      posted: 0,
    });
  });

  it("start passes over a session with a turn in progress that is no longer its thread's current session", async () => {
    const store = await createStore({ url: "memory:", dataDir: tempDir() });
    const records = new SessionRecords(store.space("sessions"));
    const startedAt = new Date(0).toISOString();
    const old = {
      ...sessionRecord("old", { key: "k-thread" }),
      pendingTurn: { turnId: "t1", request: {}, startedAt },
    };
    await records.put(old);
    await records.replace(old, sessionRecord("fresh", { key: "k-thread" }));
    const other = { ...sessionRecord("other"), pendingTurn: { turnId: "t2", request: {}, startedAt } };
    await records.put(other);
    expect(await new SessionRecords(store.space("sessions")).activeIds()).toEqual(["other"]);
    // With several processes the shared index still lists it: start passes over it all the same.
    const listed = async () => ["old", "other"];
    const shared = { activeIds: listed } as unknown as SharedRecords;
    expect(await new SessionRecords(store.space("sessions"), shared).activeIds()).toEqual(["other"]);
    await store.close();
  });
});
