/**
 * An entry of the shared queue that asks to steer, taken in while no turn runs, goes to the
 * record's queue. The take counted it first and then asked the scheduler to steer (which says no)
 * before adding it: a record built in that pause carried the count without the message, so its
 * save removed the entry from the shared queue while the message was in neither place (as in
 * ee0c80c3). Whether to steer is now decided at once, with no pause between counting and taking in.
 */
import os from "node:os";
import pino from "pino";
import { expect, it } from "vitest";
import { InboundDedupe } from "../../src/sessions/inbound-dedupe.js";
import type { LeaseGate } from "../../src/sessions/lease-gate.js";
import { LiveSession } from "../../src/sessions/live-session.js";
import type { MultiProcessHost } from "../../src/sessions/multi-process-host.js";
import { MultiProcessSessions } from "../../src/sessions/multi-process.js";
import { newSessionRecord, type QueuedMessage } from "../../src/sessions/session-record.js";
import { SessionRecords } from "../../src/sessions/session-records.js";
import { sharedQueueName } from "../../src/sessions/shared-queue.js";
import { WorkspaceDownloads } from "../../src/sessions/workspace-downloads.js";
import { HistoryLog } from "../../src/store/history-log.js";
import { memoryCoordinationPerTest } from "./helpers/memory-coordination.js";

const memory = memoryCoordinationPerTest();
const silent = pino({ level: "silent" });

function message(text: string): QueuedMessage {
  return {
    text,
    user: { id: "U1", name: "ana" },
    files: [],
    sentAt: new Date(0).toISOString(),
    dedupeKeys: [`k:${text}`],
  } as unknown as QueuedMessage;
}

it("a steering entry taken in while no turn runs is never removed by a record that lacks it", async () => {
  const sessions = new MultiProcessSessions({
    coordination: memory.coordination,
    sessions: memory.store.space("sessions"),
    marksOf: () => [],
    processId: "A",
    timing: { ttlMs: 60_000, renewMs: 20_000 },
    logger: silent,
  });
  const saves: Promise<unknown>[] = [];
  sessions.bind({
    queueCap: { admits: () => true },
    schedule: () => undefined,
    // No turn runs: steering is refused — and a record built while the take waits for that is saved.
    steer: async (live: LiveSession) => {
      saves.push(live.update((r) => r));
      return false;
    },
  } as unknown as MultiProcessHost);
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
  const gate = sessions.gate as LeaseGate;
  const stored = async () => (await records.get("s1"))?.queue.map((m) => m.text) ?? [];
  const shared = async () =>
    (await memory.coordination.items(sharedQueueName("s1"), 0)).map(
      (raw) => JSON.parse(raw).message.text as string,
    );
  try {
    const offered = await gate.offer(live, message("one"), { steer: true, capped: true });
    expect(typeof offered).toBe("object");
    await Promise.all(saves);
    expect(live.record.queue.map((m) => m.text)).toEqual(["one"]);
    // The holder dies here: "one" must be where its successor finds it.
    expect([...(await stored()), ...(await shared())]).toEqual(["one"]);
  } finally {
    await sessions.stop();
  }
});
