/**
 * ReviewerStats: what the audit log says about the safety reviewer, kept beside it — per session
 * and overall: approval cards seen, reviewer verdicts (allow / deny / unsure, live and shadow),
 * their token cost, and how often the reviewer agreed with the person who decided the same call
 * (joined by call id, whichever arrives first). The dangerous disagreements — the reviewer said
 * allow, a person denied — are listed one by one: they are what a team must see before it lets
 * the reviewer decide. Fed by `observe`, wired in front of the audit sink, and rebuilt at start by
 * replaying the audit log file, so the figures cover the log's whole history.
 */
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { z } from "zod";
import type { AuditRecord } from "../engine/audit-record.js";
import { VERDICTS, type VerdictKind } from "../engine/reviewer/verdict.js";

interface Tally {
  cards: number;
  verdicts: Record<VerdictKind, number>;
  shadow: number;
  tokensIn: number;
  tokensOut: number;
  compared: number;
  agreed: number;
}

/** One call where the reviewer said allow and a person denied. */
export interface Disagreement {
  readonly sessionId: string;
  readonly tool: string;
  readonly reason: string;
  readonly at: string;
}

type Human = "approved" | "denied";

const MAX_DISAGREEMENTS_SHOWN = 10;
const MAX_OPEN_CALLS = 5_000;

function emptyTally(): Tally {
  return {
    cards: 0,
    verdicts: { allow: 0, deny: 0, unsure: 0 },
    shadow: 0,
    tokensIn: 0,
    tokensOut: 0,
    compared: 0,
    agreed: 0,
  };
}

function humanOf(outcome: unknown): Human | undefined {
  if (outcome === "deny") return "denied";
  if (outcome === "once" || (typeof outcome === "string" && /^always_|^readonly_session$/.test(outcome)))
    return "approved";
  return undefined;
}

const loggedRecord = z.looseObject({
  kind: z.string(),
  sessionId: z.string(),
  turnId: z.string(),
  callId: z.string(),
  tool: z.string(),
  at: z.string(),
});

const num = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) ? value : 0);

/** Reviewer statistics from audit records (see the module header). */
export class ReviewerStats {
  private readonly overall = emptyTally();
  private readonly sessions = new Map<string, Tally>();
  private readonly verdicts = new Map<string, { verdict: VerdictKind; reason: string }>();
  private readonly humans = new Map<string, Human>();
  private readonly disagreements: Disagreement[] = [];

  /** Take one audit record into account (records of other kinds are ignored). */
  observe(record: AuditRecord): void {
    const approvalCard = record.interaction === undefined;
    if (record.kind === "approval_requested" && approvalCard) this.bump(record.sessionId, (t) => t.cards++);
    else if (record.kind === "reviewer_verdict") this.verdict(record);
    else if (record.kind === "approval_resolved" && approvalCard) {
      const human = humanOf(record.outcome);
      if (!human) return;
      this.remember(this.humans, record.callId, human);
      this.join(record);
    }
  }

  /**
   * Take in every record of an audit log (JSONL, as AuditLog writes it). A missing file is an empty
   * log; unreadable lines are skipped.
   */
  async replay(path: string): Promise<void> {
    const lines = createInterface({
      input: createReadStream(path, { encoding: "utf8" }),
      crlfDelay: Infinity,
    });
    try {
      for await (const line of lines) {
        if (!line.includes('"kind":"reviewer_verdict"') && !line.includes('"kind":"approval_')) continue;
        let json: unknown;
        try {
          json = JSON.parse(line);
        } catch {
          continue;
        }
        const parsed = loggedRecord.safeParse(json);
        if (parsed.success) this.observe(parsed.data as AuditRecord);
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }

  /** The reviewer line of `status` for a session. */
  statusLine(sessionId: string): string {
    const t = this.sessions.get(sessionId) ?? emptyTally();
    const calls = VERDICTS.reduce((sum, v) => sum + t.verdicts[v], 0);
    return `Reviewer: ${calls} call${calls === 1 ? "" : "s"} (${t.verdicts.allow} allow, ${t.verdicts.deny} deny, ${t.verdicts.unsure} unsure), ${t.tokensIn + t.tokensOut} tokens`;
  }

  /** The `reviewer` command's reply: this session, overall, and the dangerous disagreements. */
  describe(sessionId: string): string {
    const lines = [
      "*Safety reviewer statistics*",
      `This session: ${describeTally(this.sessions.get(sessionId) ?? emptyTally())}`,
      `Overall: ${describeTally(this.overall)}`,
    ];
    if (this.disagreements.length === 0)
      lines.push("No dangerous disagreements (reviewer allow, person denied).");
    else {
      lines.push(`Dangerous disagreements (reviewer allow, person denied): ${this.disagreements.length}`);
      for (const d of this.disagreements.slice(-MAX_DISAGREEMENTS_SHOWN))
        lines.push(
          `- ${d.tool}${d.sessionId === sessionId ? " (this session)" : ""} at ${d.at} — reviewer: ${d.reason}`,
        );
    }
    return lines.join("\n");
  }

  private verdict(record: AuditRecord): void {
    const verdict = VERDICTS.find((v) => v === record.verdict);
    if (!verdict) return;
    const shadow = record.stage === "shadow";
    this.bump(record.sessionId, (t) => {
      t.verdicts[verdict]++;
      if (shadow) t.shadow++;
      t.tokensIn += num(record.tokensIn);
      t.tokensOut += num(record.tokensOut);
    });
    this.remember(this.verdicts, record.callId, { verdict, reason: String(record.reason ?? "") });
    this.join(record);
  }

  /** Compare verdict and decision of a call once both are known (each call counts once). */
  private join(record: AuditRecord): void {
    const verdict = this.verdicts.get(record.callId);
    const human = this.humans.get(record.callId);
    if (!verdict || !human) return;
    this.verdicts.delete(record.callId);
    this.humans.delete(record.callId);
    if (verdict.verdict === "unsure") return;
    const agreed = (verdict.verdict === "allow") === (human === "approved");
    this.bump(record.sessionId, (t) => {
      t.compared++;
      if (agreed) t.agreed++;
    });
    if (verdict.verdict === "allow" && human === "denied")
      this.disagreements.push({
        sessionId: record.sessionId,
        tool: record.tool,
        reason: verdict.reason,
        at: record.at,
      });
  }

  private remember<V>(map: Map<string, V>, key: string, value: V): void {
    map.set(key, value);
    if (map.size > MAX_OPEN_CALLS) map.delete(map.keys().next().value as string);
  }

  private bump(sessionId: string, change: (tally: Tally) => void): void {
    let session = this.sessions.get(sessionId);
    if (!session) {
      session = emptyTally();
      this.sessions.set(sessionId, session);
    }
    change(session);
    change(this.overall);
  }
}

function describeTally(t: Tally): string {
  const agreement =
    t.compared === 0
      ? "no verdict compared with a person yet"
      : `agreed with people on ${t.agreed}/${t.compared} (${Math.round((100 * t.agreed) / t.compared)}%)`;
  return [
    `${t.cards} card${t.cards === 1 ? "" : "s"} seen`,
    `reviewer ${t.verdicts.allow} allow / ${t.verdicts.deny} deny / ${t.verdicts.unsure} unsure (${t.shadow} shadow)`,
    agreement,
    `${t.tokensIn} tokens in + ${t.tokensOut} out`,
  ].join(" · ");
}
