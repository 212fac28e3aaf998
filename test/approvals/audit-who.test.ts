/**
 * Who asked and who allowed: every record the engine writes carries the turn's requester,
 * platform-qualified; an approval_resolved a person decided carries their name; each line is
 * stamped with the record version. Reviewer statistics still replay a log holding both version 1
 * lines (no `v`, no requester) and version 2 lines.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ReviewerStats } from "../../src/approvals/reviewer-stats.js";
import { AUDIT_RECORD_VERSION } from "../../src/engine/audit-record.js";
import { textStep, toolStep } from "../support/scripted-provider.js";
import { ANA, makeHarness, message } from "../sessions/helpers/harness.js";
import { allowFirstCardOnce, auditLines } from "./audit-helpers.js";

describe("audit records name the requester and the decider", () => {
  it("approval_resolved carries who decided and every record who asked", async () => {
    const h = await makeHarness({
      steps: [toolStep(["c1", "write_note", { text: "hello" }]), textStep("ok")],
    });
    await h.manager.receive(message("write it", { user: ANA }));
    await allowFirstCardOnce(h);
    const records = auditLines(readFileSync(h.auditLogPath, "utf8"));
    expect(records.map((r) => r.kind)).toEqual([
      "proposal",
      "decision",
      "approval_requested",
      "approval_resolved",
      "result",
    ]);
    for (const record of records) {
      expect(record.requester).toBe(`slack:${ANA.id}`);
      expect(record.v).toBe(AUDIT_RECORD_VERSION);
    }
    expect(records.find((r) => r.kind === "approval_resolved")).toMatchObject({
      outcome: "once",
      decidedBy: `slack:${ANA.id}`,
      decidedByName: ANA.name,
    });
  });

  it("reviewer statistics replay version 1 and version 2 lines alike", async () => {
    const base = { sessionId: "s1", tool: "write_note", at: "2026-01-02T03:04:05.000Z" };
    const lines = [
      { ...base, kind: "approval_requested", turnId: "t1", callId: "c1" },
      { ...base, kind: "approval_resolved", turnId: "t1", callId: "c1", outcome: "once" },
      {
        ...base,
        v: 2,
        requester: "slack:U1",
        kind: "approval_requested",
        turnId: "t2",
        callId: "c2",
      },
      {
        ...base,
        v: 2,
        requester: "slack:U1",
        decidedByName: "Ana",
        kind: "approval_resolved",
        turnId: "t2",
        callId: "c2",
        outcome: "deny",
      },
    ];
    const path = join(mkdtempSync(join(tmpdir(), "audit-who-")), "audit.jsonl");
    writeFileSync(path, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
    const stats = new ReviewerStats();
    await stats.replay(path);
    expect(stats.describe("s1")).toContain("This session: 2 cards seen");
  });
});
