/**
 * Several processes on one store (two ScheduleServices on one memory store, one clock): the
 * per-person and per-workspace limits count the tasks every process created, the `schedules`
 * listing and the list_scheduled_tasks tool show the person's tasks from every process (each with
 * its Cancel card, which ends it from there), a removed channel pauses the tasks another process
 * created after this one started, and a task this process learns of that way — or by its periodic
 * re-read of the catalog — is armed here too: it runs (once) when the process that created it is gone.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Caller } from "../../src/core/thread-target.js";
import { scheduleCanceller, scheduleCommands } from "../../src/schedules/schedule-commands.js";
import { createScheduleTools } from "../../src/schedules/schedule-tools.js";
import type { ScheduleSettings } from "../../src/schedules/schedule-settings.js";
import type { CommandReply, ExtraCommand } from "../../src/sessions/extra-commands.js";
import { request } from "../support/engine-fixtures.js";
import { ANA_HOME, ANA_OTHER, BEN, flush, type Harness, iso, MIN, openHarness, T0 } from "./support.js";

let open: Harness[] = [];
afterEach(async () => {
  for (const harness of open.reverse()) await harness.close().catch(() => undefined);
  open = [];
});

/** Two processes on one store and one clock; the second is closed first (it does not close the store). */
async function twoProcesses(settings: Partial<ScheduleSettings> = {}): Promise<[Harness, Harness]> {
  const a = await openHarness({ settings });
  const b = await openHarness({ settings, store: a.store, clock: a.clock });
  open.push(a);
  open.push({ ...b, close: () => b.service.shutdown() });
  return [a, b];
}

/** The id of the task `caller` creates on `harness` (due `minutes` after T0), or the refusal thrown. */
async function created(harness: Harness, caller: Caller, prompt: string, minutes = 10): Promise<string> {
  const outcome = await harness.service.create(caller, { prompt, at: iso(T0 + minutes * MIN) });
  const id = /tsk_\w+/.exec(outcome.message)?.[0];
  if (!outcome.ok || id === undefined) throw new Error(outcome.message);
  // A second between creates: listings sort by creation time, and equal times have no set order.
  harness.clock.advance(1000);
  return id;
}

const ANA = { platform: "slack", userId: "U1ANA" };

async function listing(harness: Harness, caller: Caller): Promise<CommandReply> {
  const command = scheduleCommands(harness.service).find((c: ExtraCommand) => c.name === "schedules")!;
  const reply = await command.run({
    sessionId: caller.sessionId,
    target: caller.target,
    user: caller.requester,
    args: [],
    startTurn: async () => "started",
  });
  if (typeof reply === "string") throw new Error(`no cards: ${reply}`);
  return reply;
}

describe("scheduled tasks across processes on one store", () => {
  it("holds the per-person limit across both: the 3rd create is refused on either process", async () => {
    const [a, b] = await twoProcesses({ maxActivePerPerson: 2 });
    await created(a, ANA_HOME, "one");
    await created(a, ANA_HOME, "two");
    const onB = await b.service.create(ANA_OTHER, { prompt: "three", at: iso(T0 + 10 * MIN) });
    expect(onB).toMatchObject({ ok: false });
    expect(onB.message).toContain("You already have 2 active scheduled tasks");
    const onA = await a.service.create(ANA_OTHER, { prompt: "three", at: iso(T0 + 10 * MIN) });
    expect(onA.ok).toBe(false);
  });

  it("holds the per-person limit when each process created some", async () => {
    const [a, b] = await twoProcesses({ maxActivePerPerson: 2 });
    await created(a, ANA_HOME, "one");
    await created(b, ANA_OTHER, "two");
    expect((await a.service.create(ANA_HOME, { prompt: "three", at: iso(T0 + 10 * MIN) })).ok).toBe(false);
    expect((await b.service.create(ANA_HOME, { prompt: "three", at: iso(T0 + 10 * MIN) })).ok).toBe(false);
  });

  it("holds the per-workspace limit across both", async () => {
    const [a, b] = await twoProcesses({ maxActivePerWorkspace: 2 });
    await created(a, ANA_HOME, "one");
    await created(a, BEN, "two");
    const onB = await b.service.create(BEN, { prompt: "three", at: iso(T0 + 10 * MIN) });
    expect(onB).toMatchObject({ ok: false, message: expect.stringContaining("This workspace has 2 active") });
  });

  it("a task cancelled on one process counts no more on the other", async () => {
    const [a, b] = await twoProcesses({ maxActivePerPerson: 2 });
    const first = await created(a, ANA_HOME, "one");
    await created(a, ANA_HOME, "two");
    expect((await b.service.cancel(ANA, first)).ok).toBe(true);
    await created(a, ANA_HOME, "three");
    expect(a.service.listFor(ANA).map((t) => t.prompt)).toEqual(["two", "three"]);
    expect((await listing(b, ANA_HOME)).items.map((item) => item.title)).toHaveLength(2);
  });

  it("lists on one process the person's tasks created on the other, with cards that cancel them", async () => {
    const [a, b] = await twoProcesses();
    const first = await created(a, ANA_HOME, "one");
    const second = await created(a, ANA_OTHER, "two");
    const reply = await listing(b, ANA_HOME);
    expect(reply.items.map((item) => item.id)).toEqual([first, second]);
    expect(reply.items.map((item) => item.here)).toEqual([true, false]);

    const outcome = await scheduleCanceller(b.service).cancel(ANA_HOME.target, ANA_HOME.requester, first);
    expect(outcome).toMatchObject({ ok: true, message: expect.stringContaining(`Cancelled task ${first}`) });
    expect((await listing(a, ANA_HOME)).items.map((item) => item.id)).toEqual([second]);

    // The cancelled task does not run on the process that created it (nor on the other).
    a.clock.advance(11 * MIN);
    await flush(a.service);
    await flush(b.service);
    expect(a.sessions.turns.map((turn) => turn.scheduledRun?.taskId)).toEqual([second]);
    expect(b.sessions.turns).toEqual([]);
  });

  it("list_scheduled_tasks on one process names the tasks created on the other", async () => {
    const [a, b] = await twoProcesses();
    const id = await created(a, ANA_HOME, "summarise #deploys");
    const tool = createScheduleTools(b.service).find((t) => t.name === "list_scheduled_tasks")!;
    const result = await tool.execute({}, {
      request: request({
        sessionId: ANA_OTHER.sessionId,
        requester: { userId: ANA_OTHER.requester.id, displayName: ANA_OTHER.requester.name },
        metadata: { target: ANA_OTHER.target },
      }),
      facts: { downloadedFiles: new Set() },
    } as never);
    expect(JSON.stringify(result)).toContain(id);
  });

  it("a removed channel pauses the tasks another process created after this one started", async () => {
    const [a, b] = await twoProcesses();
    const id = await created(a, BEN, "post the digest");
    const paused = await b.service.channelGone({ platform: "slack", workspace: "T1", channel: "C1GEN" });
    expect(paused).toBe(1);
    await a.service.refreshFor({ platform: "slack", userId: "U2BEN" });
    expect(a.service.listFor({ platform: "slack", userId: "U2BEN" })).toMatchObject([
      { id, status: "paused" },
    ]);
    a.clock.advance(11 * MIN);
    await flush(a.service);
    await flush(b.service);
    expect(a.sessions.turns).toEqual([]);
    expect(b.sessions.turns).toEqual([]);
  });

  it("arms a task it learns of from the other process: it runs once when its creator is gone", async () => {
    const [a, b] = await twoProcesses();
    const id = await created(a, ANA_HOME, "one");
    expect((await listing(b, ANA_HOME)).items.map((item) => item.id)).toEqual([id]);
    await a.service.shutdown();
    a.clock.advance(11 * MIN);
    await flush(b.service);
    expect(b.sessions.turns.map((turn) => turn.scheduledRun?.taskId)).toEqual([id]);
    expect(a.sessions.turns).toEqual([]);
  });

  it("runs a task the other process created while that one is down, though this one never listed it", async () => {
    const [a, b] = await twoProcesses();
    const id = await created(a, ANA_HOME, "one");
    await a.service.shutdown();
    // b re-reads the catalog a quarter of the catch-up window after it started, and runs the task then.
    a.clock.advance(15 * MIN);
    await flush(b.service);
    a.clock.advance(0);
    await flush(b.service);
    expect(b.sessions.turns.map((turn) => turn.scheduledRun?.taskId)).toEqual([id]);
    expect(a.sessions.turns).toEqual([]);
    a.clock.advance(60 * MIN);
    await flush(b.service);
    expect(b.sessions.turns).toHaveLength(1);
  });

  it("runs a task both processes know exactly once", async () => {
    const [a, b] = await twoProcesses();
    const id = await created(a, ANA_HOME, "one");
    expect((await listing(b, ANA_HOME)).items.map((item) => item.id)).toEqual([id]);
    a.clock.advance(11 * MIN);
    await flush(a.service);
    await flush(b.service);
    const runs = [...a.sessions.turns, ...b.sessions.turns].map((turn) => turn.scheduledRun?.taskId);
    expect(runs).toEqual([id]);
  });
});
