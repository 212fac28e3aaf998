/**
 * The real session stack that tests and benchmarks build: TurnEngines on a given provider and tool
 * registry (no command rules), a SessionManager with the test defaults (interactive mode, steer
 * queue, one-hour approvals, audit log in the data directory, silent logger), and the orderly stop
 * of a running stack. Harnesses differ only in what they pass in.
 */
import { join } from "node:path";
import pino, { type Logger } from "pino";
import { createSessionManager } from "../../src/app/session-layer.js";
import { PermissionEngine } from "../../src/engine/permissions/permission-engine.js";
import type { ProviderClient } from "../../src/engine/provider/provider.js";
import { TurnEngine, type TurnEngineOptions } from "../../src/engine/turn-engine.js";
import type { EngineFactory } from "../../src/sessions/engine-context.js";
import type { SessionManager, SessionManagerOptions } from "../../src/sessions/session-manager.js";
import type { Store } from "../../src/store/store.js";
import type { ToolRegistry } from "../../src/tools/registry.js";

/** The system prompt of the test engines. */
export const TEST_INSTRUCTIONS = "You are a test agent.";

/**
 * Sessions get a TurnEngine on `provider` with `registry`, wired to what the session passes in;
 * `extra` is merged over the options (e.g. a safety reviewer).
 */
export function engineFactory(
  provider: ProviderClient,
  registry: ToolRegistry,
  instructions = TEST_INSTRUCTIONS,
  extra: () => Partial<TurnEngineOptions> = () => ({}),
): EngineFactory {
  const permissions = new PermissionEngine({ allowedCommandPrefixes: [], hardDenyPatterns: [] });
  return (ctx) =>
    new TurnEngine({
      provider,
      registry,
      permissions,
      instructions,
      grants: ctx.grants,
      facts: ctx.facts,
      approver: ctx.approver,
      asker: ctx.asker,
      planApprover: ctx.planApprover,
      audit: ctx.audit,
      persistence: ctx.persistence,
      onModeChange: ctx.onModeChange,
      ...(ctx.reviewerDenials ? { reviewerDenials: ctx.reviewerDenials } : {}),
      ...extra(),
    });
}

/** Where the stack writes its audit log. */
export function auditLogPathIn(dataDir: string): string {
  return join(dataDir, "audit.jsonl");
}

/** What differs between the stacks the tests and benchmarks build. */
export interface SessionManagerSetup {
  readonly store: Store;
  readonly createEngine: EngineFactory;
  /** Holds the audit log; the workspace too unless `workspaceRoot` is given. */
  readonly dataDir: string;
  readonly workspaceRoot?: string;
  /** The model and provider names sessions record. */
  readonly model: string;
  readonly provider: string;
  /** Default 10. */
  readonly maxSteps?: number;
  /** Platform-qualified approvers ("slack:U9BOSS"); none by default. */
  readonly approvers?: readonly string[];
  readonly maxSessionsInMemory: number;
  /** Silent by default. */
  readonly logger?: Logger;
  /** Merged over everything above. */
  readonly overrides?: Partial<SessionManagerOptions>;
}

/** A SessionManager with the test defaults, built by the app's composition root. */
export function buildSessionManager(setup: SessionManagerSetup): SessionManager {
  return createSessionManager({
    store: setup.store,
    createEngine: setup.createEngine,
    defaults: {
      model: setup.model,
      provider: setup.provider,
      mode: "interactive",
      maxSteps: setup.maxSteps ?? 10,
      queueMode: "steer",
    },
    approvals: { approvers: setup.approvers ?? [], ttlMs: 60 * 60 * 1000 },
    maxSessionsInMemory: setup.maxSessionsInMemory,
    workspace: { root: setup.workspaceRoot ?? setup.dataDir, context: "" },
    auditLogPath: auditLogPathIn(setup.dataDir),
    logger: setup.logger ?? pino({ level: "silent" }),
    ...setup.overrides,
  });
}

/** The parts of a running stack, in the order they stop. */
export interface RunningStack {
  /** An extension's first stop step. */
  readonly stopping?: (() => Promise<void>) | undefined;
  readonly channel: { stop(): Promise<void> };
  readonly manager: SessionManager;
  readonly store: Store;
}

/** Stop a stack: the extension, the channel (no new input), the sessions (drained), the store. */
export async function stopStack(stack: RunningStack, drainMs: number): Promise<void> {
  await stack.stopping?.();
  await stack.channel.stop();
  await stack.manager.drain(drainMs);
  await stack.store.close();
}
