/**
 * ToolContext.approvedByPerson: a tool learns whether a person approved this very call on its card —
 * what decides, for one, whether a scheduled task's text counts as a person's words. A standing
 * grant, the mode or the reviewer's allow lets a call run without anyone seeing it: false. In
 * reviewed mode a call the reviewer is unsure of goes to a person's card, and their approval: true.
 */
import { describe, expect, it } from "vitest";
import { defineTool, ok } from "../../src/core/tool.js";
import { z } from "zod";
import { textStep, toolStep } from "../support/scripted-provider.js";
import { collect, makeHarness, makeRequest } from "./helpers/harness.js";
import { reviewedHarness, verdict } from "./reviewer/support.js";

/** A write tool that records what its context said. */
function recorder() {
  const seen: boolean[] = [];
  const tool = defineTool({
    name: "note_down",
    description: "writes a note",
    inputSchema: z.object({}),
    category: "write",
    risk: "low",
    concurrent: false,
    execute: async (_args, context) => {
      seen.push(context.approvedByPerson === true);
      return ok("noted");
    },
  });
  return { tool, seen };
}

describe("whether a person approved the call a tool runs", () => {
  it("true after a person's approval on the card", async () => {
    const { tool, seen } = recorder();
    const h = makeHarness({ steps: [toolStep(["n1", "note_down", {}]), textStep("ok")], extraTools: [tool] });
    const turn = collect(h.engine.run(makeRequest()));
    await h.broker.next("n1");
    h.broker.approve("n1", "once");
    await turn;
    expect(seen).toEqual([true]);
  });

  it("false when a standing grant or auto mode let it run unseen", async () => {
    const granted = recorder();
    const h = makeHarness({
      steps: [toolStep(["n1", "note_down", {}]), textStep("ok")],
      extraTools: [granted.tool],
      grants: [{ kind: "tool", tool: "note_down" }],
    });
    await collect(h.engine.run(makeRequest()));
    expect(granted.seen).toEqual([false]);
    const auto = recorder();
    const a = makeHarness({
      steps: [toolStep(["n1", "note_down", {}]), textStep("ok")],
      extraTools: [auto.tool],
    });
    await collect(a.engine.run(makeRequest({ mode: "auto" })));
    expect(auto.seen).toEqual([false]);
  });

  it("false when the reviewer allowed it in reviewed mode", async () => {
    const { tool, seen } = recorder();
    const h = reviewedHarness([verdict("allow")], {
      steps: [toolStep(["n1", "note_down", {}]), textStep("ok")],
      extraTools: [tool],
    });
    const events = await collect(h.engine.run(makeRequest({ mode: "reviewed" })));
    expect(h.model.requests).toHaveLength(1);
    expect(events.filter((event) => event.type === "permission-required")).toEqual([]);
    expect(seen).toEqual([false]);
  });

  it("true when the reviewer was unsure and a person approved it on the card", async () => {
    const { tool, seen } = recorder();
    const h = reviewedHarness([verdict("unsure")], {
      steps: [toolStep(["n1", "note_down", {}]), textStep("ok")],
      extraTools: [tool],
    });
    const turn = collect(h.engine.run(makeRequest({ mode: "reviewed" })));
    await h.broker.next("n1");
    expect(h.model.requests).toHaveLength(1);
    expect(seen).toEqual([]);
    h.broker.approve("n1", "once");
    await turn;
    expect(seen).toEqual([true]);
  });
});
