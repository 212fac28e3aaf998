/**
 * Session test harness: a SessionManager on a memory or SQLite store, with TurnEngines on one
 * scripted provider, the session test tools, a silent logger and recording outputs for "slack".
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PendingStore } from "../../../src/approvals/pending-store.js";
import type { Card } from "../../../src/core/card.js";
import type { SessionTurnEngine } from "../../../src/engine/session-turn-engine.js";
import type { InboundMessage } from "../../../src/core/inbound-message.js";
import type { PlatformUser, ThreadTarget } from "../../../src/core/thread-target.js";
import type { PressResult } from "../../../src/core/button-press.js";
import type { SessionManager, SessionManagerOptions } from "../../../src/sessions/session-manager.js";
import { newSessionRecord, type SessionRecord } from "../../../src/sessions/session-record.js";
import { createStore } from "../../../src/store/create-store.js";
import type { Store } from "../../../src/store/store.js";
import { cardPress } from "../../support/card-press.js";
import { RecordingOutputs } from "../../support/recording-output.js";
import { ScriptedProvider, type ScriptedStep } from "../../support/scripted-provider.js";
import { auditLogPathIn, buildSessionManager, engineFactory } from "../../support/session-stack.js";
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

/** A new session's record for thread `id` (interactive, provider "p", model "m"); `overrides` change any field. */
export function sessionRecord(
  id: string,
  overrides: Partial<Parameters<typeof newSessionRecord>[0]> = {},
): SessionRecord {
  return newSessionRecord({
    id,
    key: `k-${id}`,
    target: thread(id),
    mode: "interactive",
    provider: "p",
    model: "m",
    now: new Date(0),
    ...overrides,
  });
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
  readonly engines: SessionTurnEngine[];
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
  const createEngine = engineFactory(provider, sessionTestRegistry(runs));
  const engines: SessionTurnEngine[] = [];
  const auditLogPath = auditLogPathIn(dataDir);
  const manager = buildSessionManager({
    store,
    createEngine: (ctx) => {
      const engine = createEngine(ctx);
      engines.push(engine);
      return engine;
    },
    dataDir,
    model: "test-model",
    provider: "scripted",
    approvers: ["slack:U_BOSS"],
    maxSessionsInMemory: 50,
    overrides: options.overrides,
  });
  const outputs = new RecordingOutputs();
  manager.registerOutput("slack", outputs.factory);
  return { manager, outputs, provider, runs, store, dataDir, auditLogPath, engines };
}

/**
 * Press a card's button as `user` (default Ana, the requester in these tests), in the card's own
 * conversation: the thread these outputs recorded it in, else (a card posted before a restart) the
 * one its stored item was asked in, else (an id nothing knows) the default thread.
 */
export async function pressCard(
  h: Harness,
  card: { readonly pendingId: string },
  action = "once",
  user: PlatformUser = ANA,
): Promise<PressResult> {
  const { pendingId } = card;
  const asked =
    h.outputs.placeOf(pendingId) ?? (await new PendingStore(h.store).get(pendingId))?.target ?? thread();
  return h.manager.press(cardPress(asked, pendingId, action, user));
}

/**
 * Send `write <text>` in the default thread, for a harness whose first step calls a tool that
 * needs approval, and wait for the open card.
 */
export async function suspendAtApproval(h: Harness, text = "hi"): Promise<Card> {
  await h.manager.receive(message(`write ${text}`));
  const out = h.outputs.for(thread());
  return h.outputs.until(
    () => out.latestCards.find((c) => c.kind === "approval" && c.buttons.length > 0),
    "card",
  );
}
