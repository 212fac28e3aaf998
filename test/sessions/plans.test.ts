import { describe, expect, it } from "vitest";
import { planRejected } from "../../src/engine/tool-results.js";
import { textStep, toolStep } from "../support/scripted-provider.js";
import { ANA, BOSS, type Harness, makeHarness, message, thread, pressCard } from "./helpers/harness.js";

async function planCardOf(h: Harness) {
  const out = h.outputs.for(thread());
  return h.outputs.until(() => out.latestCards.find((c) => c.kind === "plan"), "plan card");
}

describe("plan proposals", () => {
  it("approving a plan in auto mode switches the session's stored mode", async () => {
    const h = await makeHarness({
      steps: [toolStep(["p1", "propose_plan", { plan: "1. write a note" }]), textStep("on it")],
    });
    await h.manager.command(thread(), ANA, "mode", ["plan"]);
    await h.manager.receive(message("plan the change"));
    const card = await planCardOf(h);
    expect(card.blocks[0]).toEqual({ kind: "text", text: "1. write a note" });
    // Auto mode is less safe: in a shared thread with an approver configured, the approver decides.
    expect((await pressCard(h, card, "plan_auto", ANA)).status).toBe("not_allowed");
    await pressCard(h, card, "plan_auto", BOSS);
    await h.manager.idle();
    expect(h.outputs.for(thread()).card(card.pendingId)?.outcome).toBe("Approved (auto mode) by Boss");
    expect(await h.manager.command(thread(), ANA, "status", [])).toMatch(/Mode: auto/);
  });

  it("a reply from the requester rejects the plan with that feedback", async () => {
    const h = await makeHarness({
      steps: [toolStep(["p1", "propose_plan", { plan: "1. do it" }]), textStep("revising")],
    });
    await h.manager.command(thread(), ANA, "mode", ["plan"]);
    await h.manager.receive(message("plan the change"));
    const card = await planCardOf(h);
    expect((await h.manager.receive(message("also add tests"))).status).toBe("answered");
    await h.manager.idle();
    expect(h.outputs.for(thread()).card(card.pendingId)?.outcome).toBe("Rejected by Ana: also add tests");
    const result = h.provider.lastRequest.messages.find((m) => m.role === "tool");
    expect(result).toMatchObject({ content: planRejected("also add tests") });
    expect(await h.manager.command(thread(), ANA, "status", [])).toMatch(/Mode: plan/);
  });
});
