/**
 * ReviewerStats: what the audit log says about the safety reviewer, kept beside it — per session
 * and overall: approval cards seen, reviewer verdicts (allow / deny / unsure, live and shadow),
 * their token cost, how often the reviewer agreed with the person who decided the same call
 * (joined by session and call id, whichever arrives first), and the dangerous disagreements — the
 * reviewer said allow, a person denied: what a team must see before it lets the reviewer decide.
 * Those are listed one by one only to the session they happened in: the reviewer's reason
 * paraphrases the call, so another session's (someone's DM) would show what that person asked
 * for. Overall there are only counts, which tell nothing of any session's content; the calls
 * themselves are in the audit log, for whoever runs the service. Fed by `observe`, wired in front
 * of the audit sink, and rebuilt at start by replaying the audit log file, so the overall figures
 * cover the log's whole history. Per session, only the MAX_SESSIONS sessions with the latest
 * reviewer activity (or asked about latest) are kept: a service that ran for months has seen far
 * more sessions than it could hold figures for, and a session gone quiet that long asks for them
 * seldom (it then starts over from its next call; the overall figures keep counting it).
 */
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { z } from "zod";
import { LruCache } from "../core/lru-cache.js";
import { errorCode } from "../core/missing-file.js";
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
  disagreements: number;
}

/** One call where the reviewer said allow and a person denied. */
interface Disagreement {
  readonly tool: string;
  readonly reason: string;
  readonly at: string;
}

/** What is kept of one session. */
interface SessionFigures {
  readonly tally: Tally;
  /** Its latest dangerous disagreements, at most MAX_DISAGREEMENTS_SHOWN. */
  disagreements: Disagreement[];
}

type Human = "approved" | "denied";

const MAX_DISAGREEMENTS_SHOWN = 10;
const MAX_OPEN_CALLS = 5_000;
/** The most sessions whose own figures are kept (see the module header). */
const MAX_SESSIONS = 2_000;

function emptyTally(): Tally {
  return {
    cards: 0,
    verdicts: { allow: 0, deny: 0, unsure: 0 },
    shadow: 0,
    tokensIn: 0,
    tokensOut: 0,
    compared: 0,
    agreed: 0,
    disagreements: 0,
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

/** A call's key for joining its verdict and decision: session and call id. */
const callKey = (record: AuditRecord): string => JSON.stringify([record.sessionId, record.callId]);

const num = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) ? value : 0);

/** Reviewer statistics from audit records (see the module header). */
export class ReviewerStats {
  private readonly overall = emptyTally();
  private readonly sessions = new LruCache<string, SessionFigures>(MAX_SESSIONS);
  private readonly verdicts = new Map<string, { verdict: VerdictKind; reason: string }>();
  private readonly humans = new Map<string, Human>();

  /** Take one audit record into account (records of other kinds are ignored). */
  observe(record: AuditRecord): void {
    const approvalCard = record.interaction === undefined;
    if (record.kind === "approval_requested" && approvalCard) this.bump(record.sessionId, (t) => t.cards++);
    else if (record.kind === "reviewer_verdict") this.verdict(record);
    else if (record.kind === "approval_resolved" && approvalCard) {
      const human = humanOf(record.outcome);
      if (!human) return;
      this.remember(this.humans, callKey(record), human);
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
      if (errorCode(error) !== "ENOENT") throw error;
    }
  }

  /** The reviewer line of `status` for a session. */
  statusLine(sessionId: string): string {
    const t = this.sessions.get(sessionId)?.tally ?? emptyTally();
    const calls = VERDICTS.reduce((sum, v) => sum + t.verdicts[v], 0);
    return `Reviewer: ${calls} call${calls === 1 ? "" : "s"} (${t.verdicts.allow} allow, ${t.verdicts.deny} deny, ${t.verdicts.unsure} unsure), ${t.tokensIn + t.tokensOut} tokens`;
  }

  /**
   * The `reviewer` command's reply in a session: its figures and the overall ones, and its own
   * dangerous disagreements (never another session's: see the module header).
   */
  describe(sessionId: string): string {
    const session = this.sessions.get(sessionId);
    const lines = [
      "*Safety reviewer statistics*",
      `This session: ${describeTally(session?.tally ?? emptyTally())}`,
      `Overall: ${describeTally(this.overall)}`,
    ];
    const own = session?.disagreements ?? [];
    if (own.length === 0)
      lines.push("No dangerous disagreements in this session (reviewer allow, person denied).");
    else {
      lines.push(
        `Dangerous disagreements in this session (reviewer allow, person denied), latest ${own.length}:`,
      );
      for (const d of own) lines.push(`- ${d.tool} at ${d.at} — reviewer: ${d.reason}`);
    }
    lines.push("Other sessions' calls are counted overall, never shown here.");
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
    this.remember(this.verdicts, callKey(record), { verdict, reason: String(record.reason ?? "") });
    this.join(record);
  }

  /**
   * Compare verdict and decision of a call once both are known (each call counts once). A call is
   * its session's: call ids repeat across sessions, and one session's verdict joined to another's
   * decision would list its reason in the other.
   */
  private join(record: AuditRecord): void {
    const key = callKey(record);
    const verdict = this.verdicts.get(key);
    const human = this.humans.get(key);
    if (!verdict || !human) return;
    this.verdicts.delete(key);
    this.humans.delete(key);
    if (verdict.verdict === "unsure") return;
    const agreed = (verdict.verdict === "allow") === (human === "approved");
    const dangerous = verdict.verdict === "allow" && human === "denied";
    this.bump(record.sessionId, (t) => {
      t.compared++;
      if (agreed) t.agreed++;
      if (dangerous) t.disagreements++;
    });
    if (dangerous)
      this.listDisagreement(record.sessionId, { tool: record.tool, reason: verdict.reason, at: record.at });
  }

  private listDisagreement(sessionId: string, disagreement: Disagreement): void {
    const session = this.sessionFigures(sessionId);
    session.disagreements = [...session.disagreements, disagreement].slice(-MAX_DISAGREEMENTS_SHOWN);
  }

  private remember<V>(map: Map<string, V>, key: string, value: V): void {
    map.set(key, value);
    if (map.size > MAX_OPEN_CALLS) map.delete(map.keys().next().value as string);
  }

  private bump(sessionId: string, change: (tally: Tally) => void): void {
    change(this.sessionFigures(sessionId).tally);
    change(this.overall);
  }

  /** The session's figures, made if new, as the most recently used. */
  private sessionFigures(sessionId: string): SessionFigures {
    let session = this.sessions.get(sessionId);
    if (!session) {
      session = { tally: emptyTally(), disagreements: [] };
      this.sessions.set(sessionId, session);
    }
    return session;
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
    `${t.disagreements} dangerous disagreement${t.disagreements === 1 ? "" : "s"}`,
    `${t.tokensIn} tokens in + ${t.tokensOut} out`,
  ].join(" · ");
}
