import { describe, expect, it } from "vitest";
import { z } from "zod";
import { callLabel } from "../../src/engine/tool-authorizer.js";
import { type AnyTool, defineTool, ok } from "../../src/core/tool.js";
import { textStep, toolStep } from "../support/scripted-provider.js";
import { collect, makeHarness, makeRequest, ofType } from "./helpers/harness.js";

function labelled(name: string, label: (args: { target: string }) => string): AnyTool {
  return defineTool({
    name,
    description: `${name} (test)`,
    inputSchema: z.object({ target: z.string(), body: z.string().optional() }),
    category: "read",
    risk: "low",
    concurrent: true,
    label,
    execute: async () => ok("done"),
  });
}

describe("status-line labels of tool calls", () => {
  it("puts the tool's own label into the started event", async () => {
    const tool = labelled("deploy_to", (args) => `to ${args.target}`);
    const h = makeHarness({
      extraTools: [tool],
      steps: [toolStep(["c1", "deploy_to", { target: "staging", body: "x".repeat(5_000) }]), textStep("ok")],
    });
    const events = await collect(h.engine.run(makeRequest({ mode: "auto" })));
    const [started] = ofType(events, "tool-call-started");
    expect(started).toMatchObject({ callId: "c1", name: "deploy_to", preview: "to staging" });
    expect(started?.args).toEqual({ target: "staging", body: "x".repeat(5_000) });
  });

  it("falls back to compact key=value pairs for a tool without a label, never raw JSON", async () => {
    const content = `# Hello\n\nfrom coworker\n${"more text ".repeat(300)}`;
    const h = makeHarness({
      steps: [toolStep(["w1", "write_file", { path: "notes/hello.md", content }]), textStep("ok")],
    });
    const events = await collect(h.engine.run(makeRequest({ mode: "auto" })));
    const [started] = ofType(events, "tool-call-started");
    expect(started?.preview).toBe('path=notes/hello.md content="# Hello …"');
    expect(started?.preview).not.toContain("{");
  });

  it("keeps a label to one capped line, and falls back when a label throws or is blank", () => {
    const args = { target: "prod", body: "b" };
    expect(
      callLabel(
        labelled("t", () => `line one\nline two`),
        args,
      ),
    ).toBe("line one …");
    expect(
      callLabel(
        labelled("t", () => "y".repeat(500)),
        args,
      ),
    ).toHaveLength(80);
    const throwing = labelled("t", () => {
      throw new Error("bad label");
    });
    expect(callLabel(throwing, args)).toBe("target=prod body=b");
    expect(
      callLabel(
        labelled("t", () => "   "),
        args,
      ),
    ).toBe("target=prod body=b");
  });

  it("leaves the approval card's preview as it was (JSON summary for a tool without a preview)", async () => {
    const h = makeHarness({
      steps: [toolStep(["w1", "write_file", { path: "a.md", content: "hi" }]), textStep("ok")],
    });
    const turn = collect(h.engine.run(makeRequest()));
    const pending = await h.broker.next("w1");
    expect(pending.kind === "approval" && pending.request.preview).toEqual({
      summary: 'write_file {"path":"a.md","content":"hi"}',
    });
    h.broker.approve("w1", "once");
    const events = await turn;
    expect(ofType(events, "tool-call-started")[0]?.preview).toBe("path=a.md content=hi");
  });
});
