/**
 * wake_me_later cannot keep a conversation running unasked turns for ever: a wake-up is at least
 * a minimum delay ahead, and a turn a wake-up started (its request's scheduledRun names the
 * wake-up) sets at most one more, one deeper in its chain; past the configured depth the call is
 * refused, telling the model to ask the person, until a person's own turn starts a new chain. The
 * depth is kept in the store, so a woken turn on another process counts on. A task the agent
 * schedules with no person approving is a link of the chain too (else a woken turn at the end
 * would schedule a run whose wake-ups start afresh); one a person approved starts a new chain.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ToolContext } from "../../src/core/tool.js";
import { createScheduleTools } from "../../src/schedules/schedule-tools.js";
import type { NewWakeArgs } from "../../src/schedules/wake-later.js";
import { request } from "../support/engine-fixtures.js";
import { ANA_HOME, flush, type Harness, HOME, iso, MIN, openHarness, T0 } from "./support.js";

const harnesses: Harness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0).reverse()) await h.close();
});

async function open(options: Parameters<typeof openHarness>[0] = {}): Promise<Harness> {
  const h = await openHarness(options);
  harnesses.push(h);
  return h;
}

/**
 * The context of a tool call by Ana's turn in HOME, started by `scheduledRun` when given; a person
 * approved the call on its card when `approvedByPerson`.
 */
function contextOf(scheduledRun?: unknown, approvedByPerson?: boolean): ToolContext {
  return {
    ...(approvedByPerson === undefined ? {} : { approvedByPerson }),
    request: request({
      sessionId: ANA_HOME.sessionId,
      requester: { userId: ANA_HOME.requester.id, displayName: ANA_HOME.requester.name },
      metadata: { target: HOME, ...(scheduledRun === undefined ? {} : { scheduledRun }) },
    }),
    callId: "c1",
    signal: new AbortController().signal,
    emitOutput: () => undefined,
    facts: { downloadedFiles: new Set() },
  };
}

/** The wake-up id an accepted wakeLater names. */
async function wakeId(h: Harness, args: NewWakeArgs): Promise<string> {
  const outcome = await h.service.wakeLater(ANA_HOME, args);
  const id = /wak_[0-9a-f]{12}/.exec(outcome.message)?.[0];
  if (!outcome.ok || id === undefined) throw new Error(outcome.message);
  return id;
}

describe("wake_me_later's minimum delay", () => {
  it("refuses a wake-up less than a minute ahead, by in_s or at, and gives its slot back", async () => {
    const h = await open({ settings: { wakesPerSessionPerHour: 1 } });
    for (const args of [{ in_s: 0.001 }, { in_s: 59 }, { at: iso(T0 + 30_000) }])
      expect(await h.service.wakeLater(ANA_HOME, { note: "continue", ...args })).toEqual({
        ok: false,
        message: "A wake-up must be at least 1 min ahead.",
      });
    expect((await h.service.wakeLater(ANA_HOME, { note: "continue", in_s: 60 })).ok).toBe(true);
  });

  it("follows the configured minimum", async () => {
    const h = await open({ settings: { minWakeMs: 5 * MIN } });
    expect((await h.service.wakeLater(ANA_HOME, { note: "x", in_s: 240 })).message).toBe(
      "A wake-up must be at least 5 min ahead.",
    );
    expect((await h.service.wakeLater(ANA_HOME, { note: "x", in_s: 300 })).ok).toBe(true);
  });
});

describe("a chain of wake-ups set by woken turns", () => {
  it("ends at the configured depth; the person's own turn starts a new chain", async () => {
    const h = await open();
    const wake = createScheduleTools(h.service).find((t) => t.name === "wake_me_later")!;
    const call = (scheduledRun?: unknown) =>
      wake.execute({ note: "continue the loop", in_s: 60 }, contextOf(scheduledRun));
    let startedBy: unknown;
    for (let depth = 1; depth <= 5; depth += 1) {
      const result = await call(startedBy);
      expect(result.ok, result.output).toBe(true);
      if (depth > 1) expect(result.output).toContain(`It is wake-up ${depth} of at most 5 in a row`);
      h.clock.advance(2 * MIN);
      await flush(h.service);
      expect(h.sessions.turns).toHaveLength(depth);
      startedBy = h.sessions.turns.at(-1)!.scheduledRun;
    }
    const refused = await call(startedBy);
    expect(refused.ok).toBe(false);
    expect(refused.output).toContain("the 5th in a row set with no person asking, the most allowed");
    expect(refused.output).toContain("ask the person whether to keep checking");
    h.clock.advance(10 * MIN);
    await flush(h.service);
    expect(h.sessions.turns).toHaveLength(5);
    expect((await call()).ok).toBe(true);
  });

  it("follows the configured depth", async () => {
    const h = await open({ settings: { maxWakeChain: 2 } });
    const first = await wakeId(h, { note: "a", in_s: 60 });
    const second = await wakeId(h, { note: "b", in_s: 60, wokenBy: { taskId: first } });
    expect(
      (await h.service.wakeLater(ANA_HOME, { note: "c", in_s: 60, wokenBy: { taskId: second } })).message,
    ).toContain(`started by wake-up ${second}, the 2nd in a row`);
  });

  it("lets a woken turn set only one wake-up; one refused for its time is no follower", async () => {
    const h = await open();
    const first = await wakeId(h, { note: "a", in_s: 60 });
    expect((await h.service.wakeLater(ANA_HOME, { note: "b", in_s: 1, wokenBy: { taskId: first } })).ok).toBe(
      false,
    );
    await wakeId(h, { note: "b", in_s: 60, wokenBy: { taskId: first } });
    expect(
      (await h.service.wakeLater(ANA_HOME, { note: "c", in_s: 60, wokenBy: { taskId: first } })).message,
    ).toBe(
      `This turn was started by wake-up ${first} and has already set the wake-up that follows it; a turn started by a wake-up may set only one.`,
    );
  });

  it("counts a wake-up whose depth is not known as the deepest allowed", async () => {
    const h = await open();
    const outcome = await h.service.wakeLater(ANA_HOME, {
      note: "a",
      in_s: 60,
      wokenBy: { taskId: "wak_0123456789ab" },
    });
    expect(outcome.ok).toBe(false);
    expect(outcome.message).toContain("the 5th in a row");
  });

  it("counts on in a woken turn on another process on the store", async () => {
    const a = await open();
    const b = await openHarness({ store: a.store, clock: a.clock });
    harnesses.push({ ...b, close: () => b.service.shutdown() });
    const first = await wakeId(a, { note: "a", in_s: 60 });
    expect(
      (await b.service.wakeLater(ANA_HOME, { note: "b", in_s: 60, wokenBy: { taskId: first } })).message,
    ).toContain("It is wake-up 2 of at most 5 in a row");
  });

  it("the run of a task with no depth (a person's) starts a chain", async () => {
    const h = await open({ settings: { maxWakeChain: 1 } });
    const wake = createScheduleTools(h.service).find((t) => t.name === "wake_me_later")!;
    const run = { taskId: "tsk_0123456789ab", dueAt: iso(T0) };
    const result = await wake.execute({ note: "look again", in_s: 60 }, contextOf(run));
    expect(result.ok, result.output).toBe(true);
  });
});

describe("a task the agent schedules with no person approving", () => {
  /** The tools, and a step: run a tool in the turn `startedBy` started, then let what it set run. */
  async function loop(maxWakeChain: number) {
    const h = await open({ settings: { maxWakeChain } });
    const tools = createScheduleTools(h.service);
    const call = (name: string, args: unknown, startedBy?: unknown, approvedByPerson?: boolean) =>
      tools.find((t) => t.name === name)!.execute(args as never, contextOf(startedBy, approvedByPerson));
    const wake = (startedBy?: unknown) =>
      call("wake_me_later", { note: "continue the loop", in_s: 60 }, startedBy);
    const schedule = (startedBy?: unknown, approvedByPerson?: boolean) =>
      call(
        "schedule_task",
        { prompt: "call wake_me_later to continue the loop", at: iso(h.clock.now() + 5 * MIN) },
        startedBy,
        approvedByPerson,
      );
    /** Let the wake-up or task just set run; the scheduledRun of the turn it started. */
    const run = async () => {
      const before = h.sessions.turns.length;
      h.clock.advance(6 * MIN);
      await flush(h.service);
      expect(h.sessions.turns).toHaveLength(before + 1);
      return h.sessions.turns.at(-1)!.scheduledRun;
    };
    return { h, wake, schedule, run };
  }

  it("is refused in a woken turn at the chain's end, like a wake-up", async () => {
    const { wake, schedule, run } = await loop(2);
    expect((await wake()).ok).toBe(true);
    const first = await run();
    expect((await wake(first)).ok).toBe(true);
    const second = await run();
    expect((await wake(second)).ok).toBe(false);
    const refused = await schedule(second);
    expect(refused.ok).toBe(false);
    expect(refused.output).toContain("the 2nd in a row set with no person asking, the most allowed");
    expect(refused.output).toContain("ask the person");
  });

  it("is one deeper than the woken turn that set it, which sets no other follower; its run counts as woken", async () => {
    const { wake, schedule, run } = await loop(3);
    expect((await wake()).ok).toBe(true);
    const first = await run();
    const scheduled = await schedule(first);
    expect(scheduled.ok, scheduled.output).toBe(true);
    expect((await wake(first)).output).toContain("has already set the wake-up that follows it");
    const taskRun = await run();
    const third = await wake(taskRun);
    expect(third.ok, third.output).toBe(true);
    expect(third.output).toContain("It is wake-up 3 of at most 3 in a row");
    expect((await wake(taskRun)).output).toContain("has already set the wake-up or task that follows it");
    const last = await run();
    expect((await wake(last)).ok).toBe(false);
    expect((await schedule(last)).ok).toBe(false);
  });

  it("chains through its own runs with no wake-up at all", async () => {
    const { schedule, run } = await loop(2);
    expect((await schedule()).ok).toBe(true); // a person's turn, auto mode: depth 1
    const first = await run();
    expect((await schedule(first)).ok).toBe(true); // depth 2
    const second = await run();
    const refused = await schedule(second);
    expect(refused.ok).toBe(false);
    expect(refused.output).toContain("started by a run of task tsk_");
  });

  it("a task a person approved in a woken turn at the chain's end runs, and its run starts a new chain", async () => {
    const { wake, schedule, run } = await loop(1);
    expect((await wake()).ok).toBe(true);
    const woken = await run();
    expect((await wake(woken)).ok).toBe(false);
    expect((await schedule(woken)).ok).toBe(false);
    const approved = await schedule(woken, true);
    expect(approved.ok, approved.output).toBe(true);
    const taskRun = await run();
    const fresh = await wake(taskRun);
    expect(fresh.ok, fresh.output).toBe(true);
    expect(fresh.output).not.toContain("in a row");
  });

  it("lets each run of a repeating one set its own follower", async () => {
    const h = await open();
    const made = await h.service.create(ANA_HOME, { prompt: "check the queue", cron: "0 * * * *" });
    const id = /tsk_[0-9a-f]{12}/.exec(made.message)?.[0];
    expect(made.ok && id !== undefined, made.message).toBe(true);
    const at = (dueAt: string) => ({ note: "again", in_s: 60, wokenBy: { taskId: id!, dueAt } });
    expect((await h.service.wakeLater(ANA_HOME, at(iso(T0 + 60 * MIN)))).message).toContain(
      "It is wake-up 2",
    );
    expect((await h.service.wakeLater(ANA_HOME, at(iso(T0 + 60 * MIN)))).ok).toBe(false);
    expect((await h.service.wakeLater(ANA_HOME, at(iso(T0 + 120 * MIN)))).message).toContain(
      "It is wake-up 2",
    );
  });
});
