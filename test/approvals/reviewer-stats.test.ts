/**
 * Reviewer statistics from audit records: cards, verdicts and tokens per session and overall,
 * agreement joined by session and call id in either arrival order, unsure left out of agreement,
 * and the dangerous disagreements (reviewer allow, person denied) counted overall and listed only
 * to their own session; per-session figures kept for a bounded number of sessions.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ReviewerStats } from "../../src/approvals/reviewer-stats.js";
import type { AuditRecord } from "../../src/engine/audit-record.js";

function record(
  kind: AuditRecord["kind"],
  sessionId: string,
  callId: string,
  fields: object = {},
): AuditRecord {
  return {
    kind,
    sessionId,
    turnId: "t",
    callId,
    tool: "run_command",
    at: "2026-12-01T20:00:00.000Z",
    ...fields,
  };
}
const card = (s: string, c: string) => record("approval_requested", s, c, { reason: "asks" });
const verdict = (s: string, c: string, v: string, stage = "shadow") =>
  record("reviewer_verdict", s, c, { stage, verdict: v, reason: `said ${v}`, tokensIn: 200, tokensOut: 20 });
const decided = (s: string, c: string, outcome: string) => record("approval_resolved", s, c, { outcome });

describe("ReviewerStats", () => {
  it("joins verdicts to decisions by call id, whichever comes first, and lists the dangerous ones", () => {
    const stats = new ReviewerStats();
    // s1: agreement (allow/approved), verdict after the decision.
    stats.observe(card("s1", "a"));
    stats.observe(decided("s1", "a", "once"));
    stats.observe(verdict("s1", "a", "allow"));
    // s1: agreement (deny/denied).
    stats.observe(card("s1", "b"));
    stats.observe(verdict("s1", "b", "deny"));
    stats.observe(decided("s1", "b", "deny"));
    // s2: dangerous disagreement (allow/denied).
    stats.observe(card("s2", "c"));
    stats.observe(verdict("s2", "c", "allow"));
    stats.observe(decided("s2", "c", "deny"));
    // s2: unsure is not compared; a question's resolution is not an approval.
    stats.observe(card("s2", "d"));
    stats.observe(verdict("s2", "d", "unsure"));
    stats.observe(decided("s2", "d", "always_command"));
    stats.observe(record("approval_resolved", "s2", "q", { interaction: "question", outcome: "answered" }));

    const s1 = stats.describe("s1");
    expect(s1).toContain("This session: 2 cards seen · reviewer 1 allow / 1 deny / 0 unsure (2 shadow)");
    expect(s1).toContain("agreed with people on 2/2 (100%) · 0 dangerous disagreements");
    expect(s1).toContain(
      "Overall: 4 cards seen · reviewer 2 allow / 1 deny / 1 unsure (4 shadow) · agreed with people on 2/3 (67%) · 1 dangerous disagreement · 800 tokens in + 80 out",
    );
    expect(s1).toContain("No dangerous disagreements in this session (reviewer allow, person denied).");
    expect(s1).not.toContain("said allow");
    expect(stats.describe("s2")).toContain(
      "Dangerous disagreements in this session (reviewer allow, person denied), latest 1:\n- run_command at 2026-12-01T20:00:00.000Z — reviewer: said allow",
    );
    expect(stats.statusLine("s2")).toBe("Reviewer: 2 calls (1 allow, 0 deny, 1 unsure), 440 tokens");
  });

  it("never lists another session's disagreement: the reviewer's reason paraphrases its call", () => {
    const stats = new ReviewerStats();
    stats.observe(card("ana-dm", "a"));
    stats.observe(
      record("reviewer_verdict", "ana-dm", "a", { verdict: "allow", reason: "send the layoff list" }),
    );
    stats.observe(decided("ana-dm", "a", "deny"));
    const elsewhere = stats.describe("ben-thread");
    expect(elsewhere).toContain("Overall: 1 card seen");
    expect(elsewhere).toContain("1 dangerous disagreement");
    expect(elsewhere).toContain("No dangerous disagreements in this session");
    expect(elsewhere).not.toContain("layoff");
    expect(stats.describe("ana-dm")).toContain("reviewer: send the layoff list");
  });

  it("joins a verdict only to a decision of its own session, whatever the call ids", () => {
    const stats = new ReviewerStats();
    stats.observe(record("reviewer_verdict", "ana-dm", "0", { verdict: "allow", reason: "the layoff list" }));
    stats.observe(decided("ben-thread", "0", "deny"));
    expect(stats.describe("ben-thread")).not.toContain("layoff");
    expect(stats.describe("ben-thread")).toContain("Overall: 0 cards seen");
    expect(stats.describe("ben-thread")).toContain("no verdict compared with a person yet · 0 dangerous");
  });

  it("lists a session's latest ten disagreements", () => {
    const stats = new ReviewerStats();
    for (let i = 0; i < 12; i++) {
      stats.observe(record("reviewer_verdict", "s1", `c${i}`, { verdict: "allow", reason: `reason ${i}` }));
      stats.observe(decided("s1", `c${i}`, "deny"));
    }
    const text = stats.describe("s1");
    expect(text).toContain("12 dangerous disagreements");
    expect(text).toContain("latest 10:");
    expect(text).not.toContain("reason 1\n");
    expect(text).toContain("reason 2\n");
    expect(text).toContain("reason 11\n");
  });

  it("keeps figures for a bounded number of sessions, the latest active or asked about", () => {
    const stats = new ReviewerStats();
    stats.observe(card("first", "a"));
    stats.observe(record("reviewer_verdict", "asked", "a", { verdict: "allow", reason: "kept" }));
    stats.observe(decided("asked", "a", "deny"));
    for (let i = 0; i < 20_000; i++) {
      stats.observe(card(`s${i}`, "a"));
      if (i % 100 === 0) stats.statusLine("asked");
    }
    // Before, every session's tally stayed for good (and each start replayed them all back in).
    expect(stats.describe("first")).toContain("This session: 0 cards seen");
    expect(stats.describe("s0")).toContain("This session: 0 cards seen");
    expect(stats.describe("s19999")).toContain("This session: 1 card seen");
    expect(stats.describe("asked")).toContain("reviewer: kept");
    expect(stats.describe("asked")).toContain(
      "Overall: 20001 cards seen · reviewer 1 allow / 0 deny / 0 unsure (0 shadow) · agreed with people on 0/1",
    );
  });

  it("says so when nothing was compared yet", () => {
    const stats = new ReviewerStats();
    stats.observe(verdict("s1", "a", "allow", "live"));
    expect(stats.describe("s1")).toContain("no verdict compared with a person yet");
    expect(stats.describe("s1")).toContain("No dangerous disagreements");
  });

  it("replays an audit log file (a missing file is an empty log, junk lines are skipped)", async () => {
    const dir = await mkdtemp(join(tmpdir(), "reviewer-stats-"));
    try {
      const path = join(dir, "audit.jsonl");
      const lines = [
        card("s1", "a"),
        verdict("s1", "a", "allow"),
        record("result", "s1", "a", { status: "ok" }),
        decided("s1", "a", "deny"),
      ].map((r) => JSON.stringify(r));
      await writeFile(path, `${lines.join("\n")}\n{"kind":"approval_requested" not json\n`);
      const stats = new ReviewerStats();
      await stats.replay(join(dir, "missing.jsonl"));
      await stats.replay(path);
      expect(stats.describe("s1")).toContain(
        "This session: 1 card seen · reviewer 1 allow / 0 deny / 0 unsure",
      );
      expect(stats.describe("s1")).toContain(
        "Dangerous disagreements in this session (reviewer allow, person denied), latest 1:",
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
