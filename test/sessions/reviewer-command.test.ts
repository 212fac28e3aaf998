/**
 * The `reviewer` thread command through the session layer: a thread sees its own session's
 * dangerous disagreements and only counts of everyone else's — another session's call and the
 * reviewer's reason about it (someone's DM) never reach it. The statistics come from the audit log
 * replayed at start, as after a restart.
 */
import { writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import type { AuditRecord } from "../../src/engine/audit-record.js";
import { textStep } from "../support/scripted-provider.js";
import { auditLogPathIn } from "../support/session-stack.js";
import { BEN, makeHarness, message, tempDir, thread } from "./helpers/harness.js";

const REASON = "User asked to send the draft layoff list (Q3, 14 names) to hr-legal@corp.example";

/** A call in Ana's DM the reviewer allowed (in shadow) and Ana denied, as the audit log has it. */
function anasDeniedCall(): string {
  const base = {
    sessionId: "sess-ana-dm",
    turnId: "t1",
    callId: "c1",
    tool: "send_message",
    at: "2026-03-01T10:00:00.000Z",
  };
  const records: AuditRecord[] = [
    { ...base, kind: "approval_requested" },
    { ...base, kind: "reviewer_verdict", verdict: "allow", stage: "shadow", reason: REASON },
    { ...base, kind: "approval_resolved", outcome: "deny" },
  ];
  return `${records.map((r) => JSON.stringify(r)).join("\n")}\n`;
}

describe("the reviewer command", () => {
  it("in Ben's thread counts a disagreement in Ana's DM overall but shows nothing of it", async () => {
    const dataDir = tempDir();
    await writeFile(auditLogPathIn(dataDir), anasDeniedCall());
    const h = await makeHarness({ dataDir, steps: [textStep("hi")] });
    await h.manager.start();
    const bens = thread("1700000999.000100", "C_BEN");
    await h.manager.receive(message("hello", { user: BEN, target: bens }));
    await h.manager.idle();
    const reply = await h.manager.command(bens, BEN, "reviewer", []);
    expect(reply).not.toContain("layoff");
    expect(reply).not.toContain("send_message");
    expect(reply).toContain("No dangerous disagreements in this session");
    expect(reply).toMatch(/^Overall: 1 card seen .* 1 dangerous disagreement ·/m);
    await h.store.close();
  });
});
