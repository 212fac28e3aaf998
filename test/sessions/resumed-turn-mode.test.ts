/**
 * The mode a resumed turn decides its calls in: the session's mode now, not the one the turn was
 * stored with when it started. A `/mode` while the turn waits at a card (here across a restart,
 * where no turn runs in the process that takes the command) reaches the resumed turn, as the reply
 * says. A turn still running in the process keeps its mode, and the reply says the switch is from
 * the next turn. A plan approved during a turn is saved to the session's record (ordered before
 * the turn parks at its next card), so the turn resumes in the approved mode for its later steps;
 * a call made beside the plan, still waiting when the turn parks, is decided in the mode its step
 * was proposed in (stored with the step), never the one the plan went into.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Card } from "../../src/core/card.js";
import type { PermissionMode } from "../../src/core/modes.js";
import { sessionKeyOf } from "../../src/core/thread-target.js";
import { SessionRecords } from "../../src/sessions/session-records.js";
import { type ScriptedStep, textStep, toolStep } from "../support/scripted-provider.js";
import {
  ANA,
  BOSS,
  type Harness,
  makeHarness,
  message,
  pressCard,
  tempDir,
  thread,
} from "./helpers/harness.js";
import { ToolRuns } from "./helpers/test-tools.js";

const defaults = (mode: PermissionMode) => ({
  model: "m",
  provider: "scripted",
  mode,
  maxSteps: 10,
  queueMode: "followup" as const,
});

/** A process on `dataDir` whose sessions start in `mode` and whose model answers with `steps`, started. */
async function started(
  dataDir: string,
  runs: ToolRuns,
  mode: PermissionMode,
  steps: readonly ScriptedStep[],
): Promise<Harness> {
  const h = await makeHarness({ dataDir, runs, overrides: { defaults: defaults(mode) }, steps });
  await h.manager.start();
  return h;
}

/**
 * `h` is asked to "plan it"; Boss approves the plan its turn proposes with `choice`
 * ("plan_interactive", "plan_auto"), and the card `next` picks then shows: it is returned.
 */
async function planApproved(h: Harness, choice: string, next: (card: Card) => boolean): Promise<Card> {
  await h.manager.receive(message("plan it"));
  const out = h.outputs.for(thread());
  const plan = await h.outputs.until(() => out.latestCards.find((c) => c.kind === "plan"), "plan card");
  expect((await pressCard(h, plan, choice, BOSS)).status).toBe("accepted");
  return h.outputs.until(() => out.latestCards.find(next), "the card after the plan");
}

let open: Harness[] = [];
afterEach(async () => {
  for (const h of open) {
    await h.manager.drain(1_000);
    await h.store.close();
  }
  open = [];
});

describe("the mode of a resumed turn", () => {
  it("a `/mode interactive` while an auto turn is parked at a card reaches the resumed turn", async () => {
    const dataDir = tempDir();
    const runs = new ToolRuns();
    const first = await started(dataDir, runs, "auto", [toolStep(["c1", "steer_note", { text: "a" }])]);
    await first.manager.receive(message("steer a"));
    const out1 = first.outputs.for(thread());
    const card = await first.outputs.until(() => out1.latestCards[0], "card");
    expect(await first.manager.drain(1_000)).toEqual({ finished: 0, interrupted: 0, parked: 1 });
    await first.store.close();

    const h = await started(dataDir, runs, "auto", [
      toolStep(["c2", "write_note", { text: "b" }]),
      textStep("done"),
    ]);
    open.push(h);
    // No turn runs in this process: the switch is for the parked turn too, and the reply says so.
    expect(await h.manager.command(thread(), ANA, "mode", ["interactive"])).toBe("Mode set to interactive.");
    expect((await pressCard(h, card, "once", BOSS)).status).toBe("accepted");
    const out2 = h.outputs.for(thread());
    const asked = await h.outputs.until(
      () => out2.latestCards.find((c) => c.tool === "write_note"),
      "write card",
    );
    expect(asked.tool).toBe("write_note");
    expect(runs.count("c2")).toBe(0);
  });

  it("a turn still running in the process keeps its mode, as the reply says (from the next turn)", async () => {
    const runs = new ToolRuns();
    const h = await makeHarness({
      runs,
      overrides: { defaults: defaults("auto") },
      steps: [
        toolStep(["c1", "steer_note", { text: "a" }]),
        toolStep(["c2", "write_note", { text: "b" }]),
        textStep("done"),
      ],
    });
    open.push(h);
    await h.manager.receive(message("steer a"));
    const out = h.outputs.for(thread());
    const card = await h.outputs.until(() => out.latestCards[0], "card");
    expect(await h.manager.command(thread(), ANA, "mode", ["interactive"])).toBe(
      "Mode set to interactive (from the next turn).",
    );
    expect((await pressCard(h, card, "once", BOSS)).status).toBe("accepted");
    await h.outputs.until(() => out.closedTurns[0], "turn end");
    await h.manager.idle();
    // Auto mode: the write ran unasked.
    expect({ ran: runs.count("c2"), asked: out.latestCards.some((c) => c.tool === "write_note") }).toEqual({
      ran: 1,
      asked: false,
    });
  });

  it("a plan approved before the turn parks is saved, and the resumed turn runs in the approved mode", async () => {
    const dataDir = tempDir();
    const runs = new ToolRuns();
    const first = await started(dataDir, runs, "plan", [
      toolStep(["p1", "propose_plan", { plan: "1. steer a. 2. write b." }]),
      toolStep(["c1", "steer_note", { text: "a" }]),
    ]);
    const card = await planApproved(first, "plan_interactive", (c) => c.tool === "steer_note");
    expect(await first.manager.drain(1_000)).toEqual({ finished: 0, interrupted: 0, parked: 1 });
    const records = new SessionRecords(first.store.space("sessions"));
    const stored = await records.get((await records.currentId(sessionKeyOf(thread()))) ?? "");
    expect({ mode: stored?.mode, by: stored?.modeSetBy?.id }).toEqual({ mode: "interactive", by: BOSS.id });
    await first.store.close();

    const h = await started(dataDir, runs, "plan", [
      toolStep(["c2", "write_note", { text: "b" }]),
      textStep("done"),
    ]);
    open.push(h);
    expect((await pressCard(h, card, "once", BOSS)).status).toBe("accepted");
    const out2 = h.outputs.for(thread());
    // Interactive mode: the approved work asks on a card (plan mode would refuse it and end the turn).
    await h.outputs.until(
      () => out2.latestCards.some((c) => c.tool === "write_note") || out2.closedTurns[0],
      "write card or turn end",
    );
    expect({
      card: out2.latestCards.some((c) => c.tool === "write_note"),
      ended: out2.closedTurns.length,
    }).toEqual({
      card: true,
      ended: 0,
    });
  });

  it("a write beside the approved plan, waiting behind a question when the turn parks, is not run on resume", async () => {
    const dataDir = tempDir();
    const runs = new ToolRuns();
    const first = await started(dataDir, runs, "plan", [
      toolStep(
        ["p1", "propose_plan", { plan: "1. read" }],
        ["q1", "ask_user", { question: "Which?", options: ["a", "b"] }],
        ["c1", "write_note", { text: "git push --force" }],
      ),
    ]);
    const question = await planApproved(first, "plan_auto", (c) => c.kind === "question");
    expect(await first.manager.drain(1_000)).toEqual({ finished: 0, interrupted: 0, parked: 1 });
    await first.store.close();

    const h = await started(dataDir, runs, "plan", [textStep("carrying on")]);
    open.push(h);
    expect((await pressCard(h, question, "q0:o0", ANA)).status).toBe("accepted");
    const out2 = h.outputs.for(thread());
    await h.outputs.until(() => out2.closedTurns[0], "turn end");
    await h.manager.idle();
    expect(runs.count("c1")).toBe(0);
  });
});
