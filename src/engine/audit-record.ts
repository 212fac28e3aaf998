/**
 * The engine's audit port: one structured record per step of a tool call's life (proposal,
 * decision, approval request / resolution, result, reviewer steps) and the sink the engine
 * writes them to. The session layer implements the sink (src/approvals/audit-log.ts).
 */

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

/** Where the engine writes its audit records. */
export type AuditSink = (record: AuditRecord) => void;
