/**
 * EngineContext: what the session layer hands the engine factory for one session — the
 * session's identity and thread, its live grants and facts, the durable person-facing
 * collaborators (approver, asker, plan approver), history persistence, the audit sink and the
 * mode callback (a plan approval's switch, recorded as its approver's). The factory (assembled
 * by the application) adds provider, tools and policy.
 * `engineContextOf` wires a live session to the layer's shared services.
 */
import type { ApprovalService } from "../approvals/approval-service.js";
import type { AskContext } from "../approvals/pending-hub-types.js";
import type { QuestionService } from "../approvals/question-service.js";
import type { ReviewerDenials } from "../approvals/reviewer-denials.js";
import type { Approver, Asker, PlanApprover } from "../engine/asking/ports.js";
import type { AuditSink } from "../engine/audit-record.js";
import type { CompactionStatePort } from "../engine/compaction-state.js";
import type { PermissionMode } from "../core/modes.js";
import type { GrantSet } from "../engine/permissions/grants.js";
import type { ReviewerDenialReporter } from "../engine/reviewer/reviewer-gate.js";
import type { SessionTurnEngine } from "../engine/session-turn-engine.js";
import type { TurnPersistence } from "../engine/turn-engine.js";
import type { SessionFacts } from "../core/tool.js";
import { type PlatformUser, replyingTo, type ThreadTarget } from "../core/thread-target.js";
import type { LiveSession } from "./live-session.js";

export interface EngineContext {
  readonly sessionId: string;
  readonly target: ThreadTarget;
  readonly grants: GrantSet;
  readonly facts: SessionFacts;
  readonly approver: Approver;
  readonly asker: Asker;
  readonly planApprover: PlanApprover;
  readonly persistence: TurnPersistence;
  readonly audit: AuditSink;
  readonly onModeChange: (mode: PermissionMode, by?: PlatformUser) => void;
  /** The session's mode when the engine is built (each request snapshot carries the current one). */
  readonly mode: PermissionMode;
  /** Shows a safety-reviewer denial in the thread, with "Allow anyway" for the requester. */
  readonly reviewerDenials?: ReviewerDenialReporter;
  /** Where the session's compaction summary outlives the engine (none: it lives as long as the engine). */
  readonly compactionState?: CompactionStatePort;
  /** How many of the session's messages come before the history it was opened with (not read). */
  readonly historyStart?: number;
}

/** Builds the engine for one session; called once per session each time it is loaded into memory. */
export type EngineFactory = (context: EngineContext) => SessionTurnEngine;

/** The session layer's services every session's engine is wired to. */
export interface EngineServices {
  readonly approvals: ApprovalService;
  readonly questions: QuestionService;
  readonly denials: ReviewerDenials;
  readonly audit: AuditSink;
}

/** The engine context of a live session: its state, persistence and the shared services. */
export function engineContextOf(live: LiveSession, services: EngineServices): EngineContext {
  const context = (): AskContext => ({
    sessionId: live.id,
    // Cards thread like the turn's replies: to the message that triggered the turn. A turn no
    // message triggered (a wake-up, a scheduled run) replies to none: its card goes to the thread
    // itself, never to the session's first message — in a group maybe another member's, whom a
    // Telegram card asking for a typed reply would then ask, though only the requester may answer.
    target: replyingTo(live.record.target, live.activeTurn?.replyTo),
    ...(live.activeTurn?.woken ? { woken: true } : {}),
    requester: live.activeTurn?.requester ?? {
      platform: live.record.target.platform,
      userId: "unknown",
      name: "unknown",
    },
    ...(live.record.startedBy
      ? {
          startedBy: {
            platform: live.record.target.platform,
            userId: live.record.startedBy.id,
            name: live.record.startedBy.name,
          },
        }
      : {}),
    parked: live.parkedTurn(),
  });
  return {
    sessionId: live.id,
    target: live.record.target,
    grants: live.grants,
    facts: live.facts,
    approver: services.approvals.approverFor(context),
    asker: services.questions.askerFor(context),
    planApprover: services.approvals.planApproverFor(context),
    persistence: live.persistence,
    audit: services.audit,
    // A plan approval's switch is its approver's. Its save is ordered before any later change of
    // the record (a park included) and before the turn's next tool starts; a failed one is logged.
    onModeChange: (mode, by) =>
      live.updateUnawaited((r) => ({ ...r, mode, modeSetBy: by }), `the switch to ${mode} mode`),
    mode: live.record.mode,
    historyStart: live.historyStart,
    reviewerDenials: services.denials.reporterFor(context),
  };
}
