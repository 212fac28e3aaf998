/**
 * A turn parked at an approval card and resumed later (after a restart, a press, a stop) puts its
 * waiting calls through authorisation again. The card's decision is final for its call: the
 * reviewer is not asked again (a grant or a mode given since: turn-resume.test.ts).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { Reviewer } from "../../src/engine/reviewer/reviewer.js";
import { ReviewerGate } from "../../src/engine/reviewer/reviewer-gate.js";
import type { PermissionMode } from "../../src/core/modes.js";
import { ScriptedProvider, type ScriptedStep, textStep, toolStep } from "../support/scripted-provider.js";
import { engineFactory } from "../support/session-stack.js";
import { type ScriptedAnswer, ScriptedReviewerModel, verdict } from "../engine/reviewer/support.js";
import { ANA, type Harness, makeHarness, message, pressCard, tempDir, thread } from "./helpers/harness.js";
import { sessionTestRegistry, ToolRuns } from "./helpers/test-tools.js";

function overridesFor(
  mode: PermissionMode,
  runs: ToolRuns,
  steps: ScriptedStep[],
  answers: ScriptedAnswer[],
) {
  const model = new ScriptedReviewerModel(answers);
  const reviewer = new Reviewer({ model, timeoutMs: 5_000 });
  const createEngine = engineFactory(
    new ScriptedProvider(steps),
    sessionTestRegistry(runs),
    undefined,
    () => ({
      reviewer: new ReviewerGate({ reviewer, shadow: false }),
    }),
  );
  const defaults = { model: "m", provider: "scripted", mode, maxSteps: 10, queueMode: "followup" as const };
  return { model, overrides: { defaults, createEngine } };
}

const harnesses: Harness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) {
    await h.manager.drain(1_000);
    await h.store.close();
  }
});

/** A first process whose turn asks about c1 on a card, then stops with the turn parked there. */
async function parkedAtCard(mode: PermissionMode, dataDir: string, runs: ToolRuns, answer: ScriptedAnswer) {
  const one = overridesFor(mode, runs, [toolStep(["c1", "write_note", { text: "rm everything" }])], [answer]);
  const first = await makeHarness({ dataDir, runs, overrides: one.overrides });
  await first.manager.start();
  await first.manager.receive(message("tidy up"));
  const out = first.outputs.for(thread());
  const card = await first.outputs.until(() => out.latestCards[0], "card");
  expect(await first.manager.drain(1_000)).toEqual({ finished: 0, interrupted: 0, parked: 1 });
  await first.store.close();
  return card;
}

/** The next process, its reviewer ready to allow anything; `now`: its clock, when not the real one. */
async function nextProcess(mode: PermissionMode, dataDir: string, runs: ToolRuns, now?: () => Date) {
  const two = overridesFor(mode, runs, [textStep("carrying on")], [verdict("allow", "looks routine")]);
  const h = await makeHarness({ dataDir, runs, overrides: { ...two.overrides, ...(now ? { now } : {}) } });
  harnesses.push(h);
  await h.manager.start();
  return { h, reviewer: two.model };
}

describe("a resumed turn's call decided on its card", () => {
  it("denied on the card after a restart: the reviewer is not asked again and the call does not run", async () => {
    const dataDir = tempDir();
    const runs = new ToolRuns();
    const card = await parkedAtCard("reviewed", dataDir, runs, {
      error: new Error("reviewer endpoint down"),
    });
    const { h, reviewer } = await nextProcess("reviewed", dataDir, runs);
    expect((await pressCard(h, card, "deny", ANA)).status).toBe("accepted");
    await vi.waitFor(() => expect(h.outputs.for(thread()).closedTurns.length).toBeGreaterThan(0));
    const shown = JSON.stringify(h.outputs.for(thread()).card(card.pendingId) ?? null);
    expect({
      reviewerAsked: reviewer.requests.length,
      ran: runs.count("c1"),
      denied: shown.includes("Denied"),
    }).toEqual({
      reviewerAsked: 0,
      ran: 0,
      denied: true,
    });
  });

  it("`stop` on the waiting turn: its cancelled call does not run though the reviewer would allow it", async () => {
    const dataDir = tempDir();
    const runs = new ToolRuns();
    await parkedAtCard("reviewed", dataDir, runs, verdict("unsure", "not sure"));
    const { h, reviewer } = await nextProcess("reviewed", dataDir, runs);
    expect(await h.manager.command(thread(), ANA, "stop", [])).toBe("Stopped the waiting turn.");
    await h.manager.idle();
    expect({ reviewerAsked: reviewer.requests.length, ran: runs.count("c1") }).toEqual({
      reviewerAsked: 0,
      ran: 0,
    });
  });

  it("its card expired while the service was down: the call does not run though the reviewer would allow it", async () => {
    const dataDir = tempDir();
    const runs = new ToolRuns();
    const card = await parkedAtCard("reviewed", dataDir, runs, verdict("unsure", "not sure"));
    const later = () => new Date(Date.now() + 2 * 60 * 60 * 1000);
    const { h, reviewer } = await nextProcess("reviewed", dataDir, runs, later);
    await vi.waitFor(() => expect(h.outputs.for(thread()).closedTurns.length).toBeGreaterThan(0));
    const shown = JSON.stringify(h.outputs.for(thread()).card(card.pendingId) ?? null);
    expect({
      reviewerAsked: reviewer.requests.length,
      ran: runs.count("c1"),
      expired: /xpired/.test(shown),
    }).toEqual({
      reviewerAsked: 0,
      ran: 0,
      expired: true,
    });
  });

  it("approved on the card: the call runs once, without the reviewer", async () => {
    const dataDir = tempDir();
    const runs = new ToolRuns();
    const card = await parkedAtCard("reviewed", dataDir, runs, verdict("unsure", "not sure"));
    const { h, reviewer } = await nextProcess("reviewed", dataDir, runs);
    expect((await pressCard(h, card, "once", ANA)).status).toBe("accepted");
    await vi.waitFor(() => expect(h.outputs.for(thread()).closedTurns.length).toBeGreaterThan(0));
    expect({ reviewerAsked: reviewer.requests.length, ran: runs.count("c1") }).toEqual({
      reviewerAsked: 0,
      ran: 1,
    });
  });
});
