/**
 * The engine's audit port: one structured record per step of a tool call's life (proposal,
 * decision, approval request / resolution, result, reviewer steps) and the sink the engine
 * writes them to. The session layer implements the sink (src/approvals/audit-log.ts).
 *
 * The file is append-only, so a reader meets every version: version 1 lines carry no `v`; version 2
 * (AUDIT_RECORD_VERSION) adds `v`, the turn's `requester` on every record the engine writes, and on
 * an approval_resolved a person decided, `decidedBy` and `decidedByName`. Fields are only ever
 * added, so a reader of version 1 (reviewer-stats' replay) reads every line. Thread commands that
 * change a session (src/sessions/session-commands.ts) write records of their own kinds, with who
 * ran them (`by`, `byName`); no turn or call is theirs, so `turnId`, `callId` and `tool` are empty.
 */

/** The version the audit log stamps on each record it writes (as `v`). */
export const AUDIT_RECORD_VERSION = 2;

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
    | "allow_anyway_used"
    // Thread commands: `mode` switched the session's mode (`mode`, `previousMode`), `grants revoke`
    // took standing grants back (`revoked`: those grants), `new` replaced the thread's session with
    // `newSessionId` (in `mode`), `stop` stopped its turn or dropped its queue (`stopped`, `dropped`).
    | "mode_switched"
    | "grants_revoked"
    | "session_renewed"
    | "session_stopped";
  readonly sessionId: string;
  readonly turnId: string;
  readonly callId: string;
  readonly tool: string;
  readonly at: string;
  /** The record's schema version (AUDIT_RECORD_VERSION), stamped by the writer; absent: 1. */
  readonly v?: number;
  /**
   * Whom the turn serves, platform-qualified ("slack:U0123"): the person whose request led to the
   * call. Absent on records written outside a turn (a denial's "Allow anyway") and in version 1.
   */
  readonly requester?: string;
  /** On an approval_resolved a person decided: their platform-qualified id ("slack:U123"). */
  readonly decidedBy?: string;
  /** …and their display name when they decided (anyone's choice: the id is the record). */
  readonly decidedByName?: string;
  /** Who did what a record outside a turn says (a thread command, an "Allow anyway"): platform-qualified. */
  readonly by?: string;
  /** …and their display name then (a thread command's records). */
  readonly byName?: string;
  readonly [field: string]: unknown;
}

/** Where the engine writes its audit records. */
export type AuditSink = (record: AuditRecord) => void;
