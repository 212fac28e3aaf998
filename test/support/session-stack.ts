/**
 * The one test stack builder: the real session stack that tests and benchmarks build, on the
 * app's composition root (createSessionManager) — TurnEngines on a given provider and tool
 * registry (no command rules), a SessionManager with the test defaults (interactive mode, steer
 * queue, one-hour approvals, audit log in the data directory, silent logger), `openStack` for a
 * whole "process" (its store, an extension's engine and manager options, the manager), and the
 * orderly stop of a running stack. The channel harnesses (Slack, Telegram), the session harness
 * and the benchmarks differ only in what they pass in and which channel they put in front.
 */
import { join } from "node:path";
import pino, { type Logger } from "pino";
import { createSessionManager } from "../../src/app/session-layer.js";
import { PermissionEngine } from "../../src/engine/permissions/permission-engine.js";
import type { ProviderClient } from "../../src/engine/provider/provider.js";
import { TurnEngine, type TurnEngineOptions } from "../../src/engine/turn-engine.js";
import type { EngineFactory } from "../../src/sessions/engine-context.js";
import type { SessionManager, SessionManagerOptions } from "../../src/sessions/session-manager.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/store.js";
import type { ToolRegistry } from "../../src/tools/registry.js";
import type { FakeOpenAI } from "../fakes/fake-openai.js";
import { sessionTestRegistry, type ToolRuns } from "../sessions/helpers/test-tools.js";

/** The system prompt of the test engines. */
export const TEST_INSTRUCTIONS = "You are a test agent.";

/** What a test engine needs besides its provider, registry and permissions. */
export type TestEngineOptions = Omit<TurnEngineOptions, "permissions" | "instructions"> & {
  /** Default TEST_INSTRUCTIONS. */
  readonly instructions?: TurnEngineOptions["instructions"];
  /** Commands run unasked; none by default (no hard-deny patterns either). */
  readonly allowedCommandPrefixes?: readonly string[];
  /** One permission engine shared by many engines (replaces allowedCommandPrefixes). */
  readonly permissions?: PermissionEngine;
};

/** The TurnEngine every test stack runs: the test instructions, no command rules unless given. */
export function testEngine(options: TestEngineOptions): TurnEngine {
  const { allowedCommandPrefixes = [], instructions = TEST_INSTRUCTIONS, permissions, ...rest } = options;
  return new TurnEngine({
    ...rest,
    instructions,
    permissions: permissions ?? new PermissionEngine({ allowedCommandPrefixes, hardDenyPatterns: [] }),
  });
}

/**
 * Sessions get a test engine on `provider` with `registry`, wired to what the session passes in;
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
    testEngine({
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
      ...(ctx.compactionState ? { compactionState: ctx.compactionState } : {}),
      historyStart: ctx.historyStart ?? 0,
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

/** What an extension builds one start of a stack from. */
export interface StackDeps {
  readonly store: Store;
  /** The provider on the fake model. */
  readonly provider: ProviderClient;
  readonly dataDir: string;
  /** Where the sessions work (the data dir itself in the Slack harness). */
  readonly workspaceRoot: string;
  readonly openai: FakeOpenAI;
  readonly runs: ToolRuns;
}

/** What an extension adds to one start of a stack with channel `C` (options `O`). */
export interface StackExtras<C, O> {
  /** Replaces the test engine (e.g. the real engine factory with more tools). */
  readonly createEngine?: EngineFactory;
  /** Merged over the stack's SessionManager options. */
  readonly manager?: Partial<SessionManagerOptions>;
  /** Merged over the stack's channel options. */
  readonly channel?: O;
  /** Once the channel has started (see each harness for where the manager's start falls). */
  readonly started?: (parts: { readonly manager: SessionManager; readonly channel: C }) => Promise<void>;
  /** First step of stopping. */
  readonly stopping?: () => Promise<void>;
}

/** Builds a start's extras (e.g. channel subscriptions); built again for every restart. */
export type StackExtension<C, O> = (deps: StackDeps) => StackExtras<C, O> | Promise<StackExtras<C, O>>;

/** What one start of a stack is built from, besides the channel. */
export interface StackSetup<C, O> extends Omit<StackDeps, "store"> {
  /** Store URL; the default SQLite file in the data dir when undefined. */
  readonly storeUrl?: string;
  readonly approvers?: readonly string[];
  readonly maxSessionsInMemory: number;
  readonly logger?: Logger;
  readonly extend?: StackExtension<C, O>;
}

/** One start of a stack before its channel: the store, the manager, and the extension's extras. */
export interface OpenedStack<C, O> {
  readonly store: Store;
  readonly manager: SessionManager;
  readonly extras: StackExtras<C, O>;
}

/**
 * Open one "process" of a stack: its store, the extension's extras, and the SessionManager with
 * the test engine (the session test tools on the fake model) unless the extension replaces it.
 */
export async function openStack<C, O>(setup: StackSetup<C, O>): Promise<OpenedStack<C, O>> {
  const store = await createStore({ url: setup.storeUrl, dataDir: setup.dataDir });
  const { provider, dataDir, workspaceRoot, openai, runs } = setup;
  const extras = (await setup.extend?.({ store, provider, dataDir, workspaceRoot, openai, runs })) ?? {};
  const manager = buildSessionManager({
    store,
    createEngine: extras.createEngine ?? engineFactory(provider, sessionTestRegistry(runs)),
    dataDir,
    workspaceRoot,
    model: "fake-model",
    provider: "openai",
    approvers: setup.approvers,
    maxSessionsInMemory: setup.maxSessionsInMemory,
    logger: setup.logger,
    overrides: extras.manager,
  });
  return { store, manager, extras };
}
