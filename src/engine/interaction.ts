/**
 * The engine's injected collaborators for anything that needs a person: approvals, questions,
 * plan proposals, and the audit sink. Sessions implement them durably (src/approvals); tests
 * implement them with scripts.
 */
import type { AlwaysOption, Provenance, QuestionSpec, ToolCategory } from "../core/events.js";

export type ApprovalOutcome = "once" | AlwaysOption | "deny" | "interrupted";

export interface PermissionRequest {
  readonly callId: string;
  readonly tool: string;
  readonly args: Readonly<Record<string, unknown>>;
  readonly reason: string;
  readonly category: ToolCategory;
  readonly provenance: Provenance;
  readonly alwaysOptions: readonly AlwaysOption[];
  /** Summary and detail block for the approval card. */
  readonly preview: { readonly summary: string; readonly detail?: { kind: string; text: string } };
}

/** An outcome with who decided it (a display name), so a standing grant records its giver. */
export interface ApprovalVerdict {
  readonly outcome: ApprovalOutcome;
  readonly by?: string | undefined;
}

/** Resolves when a person decided; an interrupted turn resolves it as "interrupted". */
export type Approver = (
  request: PermissionRequest,
  signal: AbortSignal,
) => Promise<ApprovalOutcome | ApprovalVerdict>;

export interface QuestionRequest {
  readonly callId: string;
  readonly questions: readonly QuestionSpec[];
}
/** Answers keyed by question id; `interrupted` when the turn was stopped while waiting. */
export type QuestionAnswers =
  | { readonly answers: Readonly<Record<string, string>> }
  | { readonly interrupted: true };
export type Asker = (request: QuestionRequest, signal: AbortSignal) => Promise<QuestionAnswers>;

export interface PlanProposal {
  readonly callId: string;
  readonly plan: string;
}
export type PlanDecision =
  | { readonly approved: true; readonly mode: "interactive" | "auto" }
  | { readonly approved: false; readonly feedback?: string }
  | { readonly interrupted: true };
export type PlanApprover = (proposal: PlanProposal, signal: AbortSignal) => Promise<PlanDecision>;

/** One structured audit record (proposal, decision, approval request / resolution, result). */
export interface AuditRecord {
  readonly kind:
    | "proposal"
    | "decision"
    | "approval_requested"
    | "approval_resolved"
    | "result"
    // The reviewer (src/engine/reviewer): a verdict, a call it was not allowed to judge, a one-shot
    // "Allow anyway" a person gave, and that grant used up.
    | "reviewer_verdict"
    | "reviewer_skipped"
    | "allow_anyway_granted"
    | "allow_anyway_used";
  readonly sessionId: string;
  readonly turnId: string;
  readonly callId: string;
  readonly tool: string;
  readonly at: string;
  readonly [field: string]: unknown;
}
export type AuditSink = (record: AuditRecord) => void;
