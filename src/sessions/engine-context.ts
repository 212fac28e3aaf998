/**
 * EngineContext: what the session layer hands the engine factory for one session — the
 * session's identity and thread, its live grants and facts, the durable person-facing
 * collaborators (approver, asker, plan approver), history persistence, the audit sink and the
 * mode callback. The factory (assembled by the application) adds provider, tools and policy.
 */
import type { Approver, Asker, AuditSink, PlanApprover } from "../engine/interaction.js";
import type { PermissionMode } from "../engine/modes.js";
import type { GrantSet } from "../engine/permissions/grants.js";
import type { TurnEngine, TurnPersistence } from "../engine/turn-engine.js";
import type { SessionFacts } from "../tools/tool.js";
import type { ThreadTarget } from "./contracts.js";

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
  readonly onModeChange: (mode: PermissionMode) => void;
  /** The session's mode when the engine is built (each request snapshot carries the current one). */
  readonly mode: PermissionMode;
}

/** Builds the engine for one session; called once per session each time it is loaded into memory. */
export type EngineFactory = (context: EngineContext) => TurnEngine;
