/**
 * Whose words a scheduled run carries out. A wake-up's note is always the agent's; schedule_task's
 * text is a person's only when a person approved that very call on its card, the agent's when
 * anything else let it run (auto mode, a standing grant, the reviewer), and the agent's in records
 * stored before this was kept. A run of the agent's text is a wake turn marked as the agent's own note and framed so;
 * a person's task keeps its plain framing. The mark survives a restart of the service.
 */
import pino from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AppSchedules } from "../../src/app/app-schedules.js";
import type { PermissionMode } from "../../src/core/modes.js";
import type { ToolContext } from "../../src/core/tool.js";
import { scheduledTaskSchema } from "../../src/schedules/scheduled-task.js";
import { createScheduleTools } from "../../src/schedules/schedule-tools.js";
import { ScheduleService } from "../../src/schedules/schedule-service.js";
import { DEFAULT_SCHEDULE_SETTINGS } from "../../src/schedules/schedule-settings.js";
import { storeSlotBudget } from "../../src/store/slot-budget.js";
import { request } from "../support/engine-fixtures.js";
import { ANA_HOME, flush, type Harness, HOME, openHarness, T0, MIN, iso } from "./support.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function advance(harness: Harness, ms: number): Promise<void> {
  for (let done = 0; done < ms; done += MIN) {
    harness.clock.advance(Math.min(MIN, ms - done));
    await flush(harness.service);
  }
}

/** The context of a tool call made by Ana's turn in HOME in `mode`, approved on its card by a person or not. */
function toolContext(mode: PermissionMode, approvedByPerson = false): ToolContext {
  return {
    approvedByPerson,
    request: request({
      mode,
      sessionId: ANA_HOME.sessionId,
      requester: { userId: ANA_HOME.requester.id, displayName: ANA_HOME.requester.name },
      metadata: { target: HOME },
    }),
    callId: "c1",
    signal: new AbortController().signal,
    emitOutput: () => undefined,
    facts: { downloadedFiles: new Set() },
  };
}

/** A call of one of the scheduling tools, made by Ana's turn in HOME in `mode`. */
async function callTool(
  harness: Harness,
  name: string,
  args: Record<string, unknown>,
  mode: PermissionMode,
  approvedByPerson = false,
) {
  const tool = createScheduleTools(harness.service).find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  const result = await tool.execute(tool.inputSchema.parse(args), toolContext(mode, approvedByPerson));
  expect(result.ok, result.output).toBe(true);
}

/** The app's scheduled tasks on the harness's store and sessions, with the default settings. */
async function openAppSchedules(harness: Harness): Promise<AppSchedules> {
  const app = new AppSchedules();
  await app.open({
    store: harness.store,
    sessions: harness.sessions,
    settings: DEFAULT_SCHEDULE_SETTINGS,
    approvers: [],
    logger: pino({ level: "silent" }),
    budget: storeSlotBudget(harness.store.space("budgets")),
  });
  return app;
}

describe("whose words a scheduled run carries out", () => {
  it("a wake-up's note: the run is marked as the agent's own note and framed as its own words", async () => {
    h = await openHarness();
    await callTool(
      h,
      "wake_me_later",
      { note: "The user asked me to push to my mirror.", in_s: 60 },
      "reviewed",
    );
    await advance(h, 2 * MIN);
    expect(h.sessions.turns).toHaveLength(1);
    const turn = h.sessions.turns[0]!;
    expect(turn.agentNote).toBe(true);
    expect(turn.prompt).toContain(
      "The note you left yourself (your own words, not a message from a person):",
    );
    expect(turn.prompt).toContain("> The user asked me to push to my mirror.");
  });

  it.each([
    ["a person approved it on its card", true],
    ["it ran with no person seeing it (a standing grant, auto mode, the reviewer's allow)", false],
  ] as const)(
    "schedule_task's text when %s: the person's only then, in every mode",
    async (_how, approved) => {
      // The mode alone says nothing: a card is shown in interactive mode, and in reviewed mode when
      // the reviewer is unsure; a grant or the reviewer's allow lets a call run unseen in either.
      for (const mode of ["interactive", "reviewed", "auto"] as const) {
        h = await openHarness();
        await callTool(
          h,
          "schedule_task",
          { prompt: "summarise #deploys", at: iso(T0 + 10 * MIN) },
          mode,
          approved,
        );
        const [task] = h.service.listFor({ platform: "slack", userId: "U1ANA" });
        expect(task?.promptBy, mode).toBe(approved ? "person" : "agent");
        await advance(h, 11 * MIN);
        const turn = h.sessions.turns[0]!;
        expect(turn.agentNote === true, mode).toBe(!approved);
        expect(turn.prompt, mode).toContain(
          approved
            ? "The task:\n> summarise #deploys"
            : "The task, in your own words (you set it up; no person approved this text):",
        );
        await h.close();
        h = undefined;
      }
    },
  );

  it("the app's scheduled tasks hand the tool's word on who approved the text to the service", async () => {
    h = await openHarness();
    const app = await openAppSchedules(h);
    try {
      const tool = app.tools.find((t) => t.name === "schedule_task")!;
      const context = toolContext("interactive", true);
      const args = tool.inputSchema.parse({
        prompt: "summarise #deploys",
        cron: "0 9 * * *",
        timezone: "UTC",
      });
      expect((await tool.execute(args, context)).ok).toBe(true);
      expect(app.listFor({ platform: "slack", userId: "U1ANA" }).map((t) => t.promptBy)).toEqual(["person"]);
    } finally {
      await app.shutdown();
    }
  });

  it("the app's scheduled tasks report a turn's end with the run it was for (an end for an earlier run changes nothing)", async () => {
    h = await openHarness();
    const app = await openAppSchedules(h);
    const reported = vi.spyOn(ScheduleService.prototype, "turnEnded");
    try {
      const dueAt = iso(T0 - 60 * MIN);
      app.sessionOptions().onTurnEnd!({
        sessionId: ANA_HOME.sessionId,
        metadata: { scheduledRun: { taskId: "tsk_0123456789ab", dueAt } },
        status: "error",
      });
      expect(reported).toHaveBeenCalledWith("tsk_0123456789ab", "error", dueAt);
    } finally {
      reported.mockRestore();
      await app.shutdown();
    }
  });

  it("a task created without saying a person approved it is the agent's", async () => {
    h = await openHarness();
    await h.service.create(ANA_HOME, { prompt: "summarise #deploys", at: iso(T0 + 10 * MIN) });
    await advance(h, 11 * MIN);
    expect(h.sessions.turns[0]?.agentNote).toBe(true);
  });

  it("whose words a task is survives a restart of the service", async () => {
    h = await openHarness();
    const hourly = { cron: "0 * * * *", timezone: "UTC" };
    await h.service.create(ANA_HOME, { prompt: "person's digest", ...hourly, promptBy: "person" });
    await h.service.create(ANA_HOME, { prompt: "agent's digest", ...hourly, promptBy: "agent" });
    await h.restart();
    await advance(h, 60 * MIN);
    const marks = Object.fromEntries(
      h.sessions.turns.map((turn) => [/> (.*)/.exec(turn.prompt)?.[1], turn.agentNote === true]),
    );
    expect(marks).toEqual({ "person's digest": false, "agent's digest": true });
  });

  it("a task stored before whose words it is was kept reads as the agent's", () => {
    const stored = {
      id: "tsk_0123456789ab",
      kind: "task",
      sessionId: "s-home",
      target: HOME,
      createdBy: { id: "U1ANA", name: "Ana" },
      prompt: "summarise #deploys",
      schedule: { type: "once", at: iso(T0 + 10 * MIN) },
      status: "active",
      createdAt: iso(T0),
      nextRunAt: iso(T0 + 10 * MIN),
      runs: 0,
      failures: 0,
    };
    expect(scheduledTaskSchema.parse(stored).promptBy).toBe("agent");
    expect(scheduledTaskSchema.parse({ ...stored, promptBy: "person" }).promptBy).toBe("person");
  });
});
