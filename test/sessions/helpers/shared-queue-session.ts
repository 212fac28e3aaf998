/**
 * Process "A"'s session layer over a memory store, with a session "s1" and its messages: the set-up
 * the tests of a session's shared queue (taking entries in, and saves removing them) share.
 */
import os from "node:os";
import pino from "pino";
import { InboundDedupe } from "../../../src/sessions/inbound-dedupe.js";
import type { LeaseGate } from "../../../src/sessions/lease-gate.js";
import { LiveSession } from "../../../src/sessions/live-session.js";
import type { MultiProcessHost } from "../../../src/sessions/multi-process-host.js";
import { MultiProcessSessions } from "../../../src/sessions/multi-process.js";
import { newSessionRecord, type QueuedMessage } from "../../../src/sessions/session-record.js";
import { SessionRecords } from "../../../src/sessions/session-records.js";
import { sharedQueueName } from "../../../src/sessions/shared-queue.js";
import { WorkspaceDownloads } from "../../../src/sessions/workspace-downloads.js";
import type { Coordination } from "../../../src/store/coordination/coordination.js";
import { HistoryLog } from "../../../src/store/history-log.js";
import type { MemoryCoordination } from "./memory-coordination.js";

const silent = pino({ level: "silent" });

/** A message from ana saying `text`, its dedupe key made of it. */
export function queuedMessage(text: string): QueuedMessage {
  return {
    text,
    user: { id: "U1", name: "ana" },
    files: [],
    sentAt: new Date(0).toISOString(),
    dedupeKeys: [`k:${text}`],
  } as unknown as QueuedMessage;
}

/**
 * Process "A"'s MultiProcessSessions on `memory`'s store (long leases), seeing the coordination
 * through `coordination` (memory's own by default), bound to a host that admits every message and
 * schedules nothing, with `host`'s members added.
 */
export function sessionsOfA(
  memory: MemoryCoordination,
  coordination: Coordination = memory.coordination,
  host: Partial<MultiProcessHost> = {},
): MultiProcessSessions {
  const sessions = new MultiProcessSessions({
    coordination,
    sessions: memory.store.space("sessions"),
    marksOf: () => [],
    processId: "A",
    timing: { ttlMs: 60_000, renewMs: 20_000 },
    logger: silent,
  });
  sessions.bind({
    queueCap: { admits: () => true },
    schedule: () => undefined,
    ...host,
  } as unknown as MultiProcessHost);
  return sessions;
}

/** Session "s1" live in `sessions`' process, its records saved on `memory`'s store through them. */
function liveS1(
  memory: MemoryCoordination,
  sessions: MultiProcessSessions,
): { live: LiveSession; records: SessionRecords } {
  const records = new SessionRecords(memory.store.space("sessions"), sessions.records);
  const record = newSessionRecord({
    id: "s1",
    key: "slack:T1:C1:1.2",
    target: { platform: "slack", workspace: "T1", channel: "C1", thread: "1.2" },
    mode: "interactive",
    provider: "openai",
    model: "m",
    now: new Date(0),
  });
  const live = LiveSession.create(record, {
    records,
    downloads: new WorkspaceDownloads(records.downloads, os.tmpdir(), silent),
    history: new HistoryLog(memory.store.space("history")),
    journal: memory.store.space("journal"),
    dedupe: new InboundDedupe(memory.store),
    now: () => new Date(0),
    writesInOrder: memory.store.writesInOrder,
    logger: silent,
  });
  return { live, records };
}

/** The texts of the messages in session `id`'s shared queue, in order. */
export async function sharedTexts(coordination: Coordination, id: string): Promise<string[]> {
  return (await coordination.items(sharedQueueName(id), 0)).map(
    (raw) => JSON.parse(raw).message.text as string,
  );
}

/**
 * Process "A"'s session layer (see sessionsOfA) with session "s1" live in it, its gate, and readers
 * of the messages in s1's stored record and in its shared queue.
 */
export function openS1(
  memory: MemoryCoordination,
  coordination: Coordination = memory.coordination,
  host: Partial<MultiProcessHost> = {},
) {
  const sessions = sessionsOfA(memory, coordination, host);
  const { live, records } = liveS1(memory, sessions);
  return {
    sessions,
    live,
    gate: sessions.gate as LeaseGate,
    stored: async () => (await records.get("s1"))?.queue.map((m) => m.text) ?? [],
    shared: () => sharedTexts(coordination, "s1"),
  };
}
