/**
 * SessionParts: the collaborators a SessionManager works with, built and wired to each other by
 * the composition root (src/app/session-layer.ts) and handed to the manager, which constructs
 * none of them: intake dedupe, the session records and cache, the turn scheduler, the pending
 * hub of approvals and questions, the reviewer parts, thread and module commands, item cards,
 * the audit log, the platforms' thread outputs, the parked turns, the queue cap, and — with several processes —
 * the leases, shared queues and controls that tie them together.
 */
import type { Logger } from "pino";
import type { AuditLog } from "../approvals/audit-log.js";
import type { PendingHub } from "../approvals/pending-hub.js";
import type { InboundDedupe } from "./inbound-dedupe.js";
import type { ItemCards } from "./item-cards.js";
import type { ModuleCommands } from "./module-commands.js";
import type { MultiProcessSessions } from "./multi-process.js";
import type { ParkedTurns } from "./parked-turns.js";
import type { QueueCap } from "./queue-cap.js";
import type { SessionCache } from "./session-cache.js";
import type { ThreadCommands } from "./session-commands.js";
import type { SessionRecords } from "./session-records.js";
import type { SessionReviewer } from "./session-reviewer.js";
import type { StandingItemMoves } from "./standing-item-moves.js";
import type { ThreadOutputs } from "./thread-outputs.js";
import type { TurnScheduler } from "./turn-scheduler.js";

/** What a SessionManager is made of (see the module header). */
export interface SessionParts {
  /** The session layer's logger (component "sessions"). */
  readonly logger: Logger;
  readonly outputs: ThreadOutputs;
  readonly dedupe: InboundDedupe;
  readonly hub: PendingHub;
  readonly reviewer: SessionReviewer;
  readonly records: SessionRecords;
  readonly cache: SessionCache;
  readonly scheduler: TurnScheduler;
  readonly items: ItemCards;
  readonly moduleCommands: ModuleCommands;
  /** Thread commands; with several processes, routed to the process holding the session. */
  readonly commands: Pick<ThreadCommands, "execute">;
  readonly auditLog: AuditLog;
  /** Card presses, typed answers, expiries and restart resumes of parked turns. */
  readonly parked: ParkedTurns;
  /** Set when several processes share the store (a distributed coordination). */
  readonly multi: MultiProcessSessions | undefined;
  /** At most so many messages wait in a session's queue (checked where the session is held). */
  readonly queueCap: QueueCap;
  /** The standing-item moves "new" started and session loads finish (stopped by drain). */
  readonly moves: StandingItemMoves;
}
