/**
 * A session stack as one process has it on a shared Redis: its own store and coordination
 * connections on the url and a SessionManager over them (leases on short timing by default),
 * recording its outputs; and the closing of such stacks after a test.
 */
import pino from "pino";
import type { ProviderClient } from "../../../src/engine/provider/provider.js";
import type { SessionManager } from "../../../src/sessions/session-manager.js";
import type { Coordination } from "../../../src/store/coordination/coordination.js";
import { createCoordination } from "../../../src/store/coordination/create-coordination.js";
import { createStore } from "../../../src/store/create-store.js";
import type { Store } from "../../../src/store/store.js";
import type { RecordingOutputs } from "../../support/recording-output.js";
import { buildSessionManager, engineFactory } from "../../support/session-stack.js";
import { tempDir } from "./harness.js";
import { sessionTestRegistry, ToolRuns } from "./test-tools.js";

/** Short leases, so a lapse happens within a test. */
export const SHORT_LEASES = { ttlMs: 800, renewMs: 150 };

export interface RedisStack {
  /** Its process id. */
  readonly name: string;
  readonly store: Store;
  /** The real coordination (the one to close), whatever the session layer saw it through. */
  readonly coordination: Coordination;
  readonly manager: SessionManager;
  /** Set by a test that closed the stack itself. */
  closed: boolean;
}

export interface RedisStackSetup {
  readonly url: string;
  /** The stack's process id. */
  readonly name: string;
  readonly provider: ProviderClient;
  /** The provider name sessions record. */
  readonly providerName: string;
  readonly outputs: RecordingOutputs;
  /** The test tools' runs; fresh by default. */
  readonly runs?: ToolRuns;
  readonly approvers?: readonly string[];
  /** What the session layer sees the coordination through. */
  readonly wrap?: (c: Coordination) => Coordination;
  /** What the session layer sees the store through. */
  readonly wrapStore?: (s: Store) => Store;
  /** Lease (and failover scan) timing; SHORT_LEASES by default. */
  readonly timing?: typeof SHORT_LEASES;
  /** "followup" by default. */
  readonly queueMode?: "followup" | "steer";
  readonly turnsPerPerson?: number;
}

/** Open a stack on `url`, started, its outputs recorded for "slack". */
export async function openRedisStack(setup: RedisStackSetup): Promise<RedisStack> {
  const { url, name, providerName, wrap = (c) => c, wrapStore = (s) => s } = setup;
  const dataDir = tempDir();
  const store = await createStore({ url, dataDir });
  const coordination = await createCoordination({ url, dataDir, store });
  const manager = buildSessionManager({
    store: wrapStore(store),
    createEngine: engineFactory(setup.provider, sessionTestRegistry(setup.runs ?? new ToolRuns())),
    dataDir,
    model: "test-model",
    provider: providerName,
    ...(setup.approvers === undefined ? {} : { approvers: setup.approvers }),
    maxSessionsInMemory: 100,
    logger: pino({ level: "silent" }),
    overrides: {
      defaults: {
        model: "test-model",
        provider: providerName,
        mode: "interactive",
        maxSteps: 10,
        queueMode: setup.queueMode ?? "followup",
      },
      coordination: wrap(coordination),
      processId: name,
      leaseTiming: setup.timing ?? SHORT_LEASES,
      ...(setup.turnsPerPerson === undefined ? {} : { maxTurnsPerPerson: setup.turnsPerPerson }),
    },
  });
  manager.registerOutput("slack", setup.outputs.factory);
  await manager.start();
  return { name, store, coordination, manager, closed: false };
}

/** Drain and close every stack not already closed, ignoring their failures. */
export async function closeRedisStacks(stacks: readonly RedisStack[]): Promise<void> {
  for (const stack of stacks) {
    if (stack.closed) continue;
    await stack.manager.drain(1_000).catch(() => undefined);
    await stack.coordination.close().catch(() => undefined);
    await stack.store.close().catch(() => undefined);
  }
}
