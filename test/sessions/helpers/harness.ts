/**
 * Session test harness: a SessionManager on a memory or SQLite store, with TurnEngines on one
 * scripted provider, the session test tools, a silent logger and recording outputs for "slack".
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { PermissionEngine } from "../../../src/engine/permissions/permission-engine.js";
import { TurnEngine } from "../../../src/engine/turn-engine.js";
import type { InboundMessage, PlatformUser, ThreadTarget } from "../../../src/sessions/contracts.js";
import { SessionManager, type SessionManagerOptions } from "../../../src/sessions/session-manager.js";
import { createStore } from "../../../src/store/create-store.js";
import type { Store } from "../../../src/store/store.js";
import { RecordingOutputs } from "../../support/recording-output.js";
import { ScriptedProvider, type ScriptedStep } from "../../support/scripted-provider.js";
import { sessionTestRegistry, ToolRuns } from "./test-tools.js";

export const ANA: PlatformUser = { id: "U_ANA", name: "Ana" };
export const BEN: PlatformUser = { id: "U_BEN", name: "Ben" };
export const BOSS: PlatformUser = { id: "U_BOSS", name: "Boss" };

/** A Slack thread target. */
export function thread(ts = "1700000000.000100", channel = "C1"): ThreadTarget {
  return { platform: "slack", workspace: "T1", channel, thread: ts };
}

let keyCounter = 0;

/** An inbound message with fresh dedupe keys unless given. */
export function message(
  text: string,
  options: { user?: PlatformUser; target?: ThreadTarget; keys?: string[] } = {},
): InboundMessage {
  keyCounter++;
  return {
    dedupeKeys: options.keys ?? [`ev-${keyCounter}-${Math.random().toString(36).slice(2)}`],
    target: options.target ?? thread(),
    user: options.user ?? ANA,
    text,
    files: [],
    sentAt: new Date().toISOString(),
  };
}

/** A fresh temporary directory. */
export function tempDir(prefix = "coworker-sessions-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface HarnessOptions {
  readonly store?: Store;
  readonly dataDir?: string;
  readonly steps?: readonly ScriptedStep[];
  readonly runs?: ToolRuns;
  readonly overrides?: Partial<SessionManagerOptions>;
}

export interface Harness {
  readonly manager: SessionManager;
  readonly outputs: RecordingOutputs;
  readonly provider: ScriptedProvider;
  readonly runs: ToolRuns;
  readonly store: Store;
  readonly dataDir: string;
  readonly auditLogPath: string;
  readonly engines: TurnEngine[];
}

/** Open a store: "memory:" unless a data dir is given (then the default SQLite file in it). */
export async function openStore(dataDir?: string): Promise<Store> {
  return dataDir === undefined
    ? createStore({ url: "memory:", dataDir: tempDir() })
    : createStore({ url: undefined, dataDir });
}

/** Build a SessionManager wired for tests; outputs are registered for "slack". */
export async function makeHarness(options: HarnessOptions = {}): Promise<Harness> {
  const dataDir = options.dataDir ?? tempDir();
  const store = options.store ?? (await openStore(options.dataDir));
  const provider = new ScriptedProvider(options.steps ?? []);
  const runs = options.runs ?? new ToolRuns();
  const registry = sessionTestRegistry(runs);
  const permissions = new PermissionEngine({ allowedCommandPrefixes: [], hardDenyPatterns: [] });
  const engines: TurnEngine[] = [];
  const auditLogPath = join(dataDir, "audit.jsonl");
  const manager = new SessionManager({
    store,
    createEngine: (ctx) => {
      const engine = new TurnEngine({
        provider,
        registry,
        permissions,
        instructions: "You are a test agent.",
        grants: ctx.grants,
        facts: ctx.facts,
        approver: ctx.approver,
        asker: ctx.asker,
        planApprover: ctx.planApprover,
        audit: ctx.audit,
        persistence: ctx.persistence,
        onModeChange: ctx.onModeChange,
      });
      engines.push(engine);
      return engine;
    },
    defaults: {
      model: "test-model",
      provider: "scripted",
      mode: "interactive",
      maxSteps: 10,
      queueMode: "steer",
    },
    approvals: { approvers: ["slack:U_BOSS"], ttlMs: 60 * 60 * 1000 },
    maxSessionsInMemory: 50,
    workspace: { root: dataDir, context: "" },
    auditLogPath,
    logger: pino({ level: "silent" }),
    ...options.overrides,
  });
  const outputs = new RecordingOutputs();
  manager.registerOutput("slack", outputs.factory);
  return { manager, outputs, provider, runs, store, dataDir, auditLogPath, engines };
}
