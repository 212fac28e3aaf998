/**
 * A record save removes from the shared queue the entries the record carries, and no others. The
 * record is built when LiveSession.update is called, its save runs later (after the saves before
 * it): an entry taken in between is not in it. The count of entries to remove was read when the
 * save ran, so that entry left the shared queue in a save that did not hold it — lost if the
 * holder died or lost its lease before its next save. The count is now read with the record.
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
import type { Coordination, FencedWrite, FenceRef } from "../../src/store/coordination/coordination.js";
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

it("a save removes only the shared-queue entries its record holds, not those taken after it was built", async () => {
  const inner = memory.coordination;
  let hold: Promise<void> | undefined;
  // A record save waits while `hold` is set: the saves behind it wait in the session's order.
  const coordination: Coordination = Object.assign(Object.create(inner) as Coordination, {
    fencedWrite: async (fence: FenceRef, writes: readonly FencedWrite[]) => {
      if (hold && writes.some((w) => w.op === "set")) await hold;
      return inner.fencedWrite(fence, writes);
    },
  });
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
  const input = { steer: false, capped: true };
  const stored = async () => (await records.get("s1"))?.queue.map((m) => m.text) ?? [];
  const shared = async () =>
    (await inner.items(sharedQueueName("s1"), 0)).map((raw) => JSON.parse(raw).message.text as string);
  try {
    expect(typeof (await gate.offer(live, message("one"), input))).toBe("object");
    await live.update((r) => r);
    expect(await shared()).toEqual([]);
    expect(await gate.offer(live, message("two"), input)).toBe("queued");

    // A save is slow; the record of the change made behind it is built now, without "two".
    let letGo!: () => void;
    hold = new Promise<void>((resolve) => (letGo = resolve));
    const slow = live.update((r) => ({ ...r, title: "slow" }));
    const behind = live.update((r) => ({ ...r, title: "behind" }));
    // "two" is taken in before that record's save runs.
    await gate.queue.collect(live);
    expect(live.record.queue.map((m) => m.text)).toEqual(["one", "two"]);
    hold = undefined;
    letGo();
    await Promise.all([slow, behind]);

    // The holder dies here: "two" must be somewhere its successor finds it.
    expect(await stored()).toEqual(["one"]);
    expect(await shared()).toEqual(["two"]);

    // Its next save carries "two", and removes it.
    await live.update((r) => r);
    expect(await stored()).toEqual(["one", "two"]);
    expect(await shared()).toEqual([]);
  } finally {
    await sessions.stop();
  }
});
