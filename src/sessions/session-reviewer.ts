/**
 * The session layer's part of the safety reviewer: the statistics, fed from every audit record
 * on its way to the audit log (and replayed from the log at start), and the "Allow anyway" service
 * whose one-shot grants land in the live session's grants (persisted with it) — with several
 * processes, in the grants of the process holding the session (MultiProcessSessions.grant).
 */
import type { Logger } from "pino";
import type { AuditLog } from "../approvals/audit-log.js";
import { ReviewerDenials } from "../approvals/reviewer-denials.js";
import { ReviewerStats } from "../approvals/reviewer-stats.js";
import type { AuditSink } from "../engine/audit-record.js";
import type { Grant } from "../engine/permissions/grants.js";
import type { ThreadOutput } from "../core/thread-output.js";
import type { ThreadTarget } from "../core/thread-target.js";
import type { LiveSession } from "./live-session.js";
import type { SessionManagerOptions } from "./session-manager-options.js";

export interface SessionReviewer {
  readonly stats: ReviewerStats;
  /** The audit sink sessions write to: the statistics, then the audit log. */
  readonly audit: AuditSink;
  readonly denials: ReviewerDenials;
}

/** Build the reviewer parts of a SessionManager. */
export function sessionReviewer(deps: {
  readonly options: SessionManagerOptions;
  readonly auditLog: AuditLog;
  readonly logger: Logger;
  readonly now: () => Date;
  readonly outputFor: (target: ThreadTarget) => ThreadOutput | undefined;
  readonly liveById: (sessionId: string) => Promise<LiveSession | undefined>;
  /** Adds a grant where the session is held (several processes); default `addGrant` here. */
  readonly grantWhereHeld?: ((live: LiveSession, grant: Grant) => Promise<void>) | undefined;
}): SessionReviewer {
  const stats = new ReviewerStats();
  const audit: AuditSink = (record) => {
    stats.observe(record);
    deps.auditLog.sink(record);
  };
  const denials = new ReviewerDenials({
    store: deps.options.store,
    config: deps.options.approvals,
    logger: deps.logger,
    now: deps.now,
    host: {
      outputFor: deps.outputFor,
      grant: async (sessionId, grant) => {
        const live = await deps.liveById(sessionId);
        if (!live || live.retired) return false;
        await (deps.grantWhereHeld ?? addGrant)(live, grant);
        return true;
      },
      audit,
    },
  });
  return { stats, audit, denials };
}

/** Add a grant to the session's live grants and wait until its record is saved with it. */
export async function addGrant(live: LiveSession, grant: Grant): Promise<void> {
  live.grants.add(grant);
  await live.flush();
}
