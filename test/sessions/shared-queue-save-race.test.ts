/**
 * A take of a session's shared queue racing a save of its record: the save removes the entries
 * taken so far from the shared queue, and they are counted off only once its reply is in. A take
 * reading the queue by position meanwhile — the removal landed, the count not yet lowered — skipped
 * as many entries: one was never taken (the next save removed it all the same) and a later one was
 * taken twice. The take now waits for such a save.
 */
import { expect, it } from "vitest";
import type { LeaseGate } from "../../src/sessions/lease-gate.js";
import type { LiveSession } from "../../src/sessions/live-session.js";
import type { QueuedMessage } from "../../src/sessions/session-record.js";
import type { Coordination, FencedWrite, FenceRef } from "../../src/store/coordination/coordination.js";
import { memoryCoordinationPerTest } from "./helpers/memory-coordination.js";
import { queuedMessage as message, sessionsOfA, sharedTexts } from "./helpers/shared-queue-session.js";

const memory = memoryCoordinationPerTest();

it("a take while a save's removal of taken entries is under way takes every entry once", async () => {
  let applied!: () => void;
  const removalApplied = new Promise<void>((resolve) => (applied = resolve));
  let answer!: () => void;
  const replyHeld = new Promise<void>((resolve) => (answer = resolve));
  let holdNextTrim = false;
  const inner = memory.coordination;
  // The store applies the save's write at once; its reply comes only when the test lets it.
  const coordination: Coordination = Object.assign(Object.create(inner) as Coordination, {
    fencedWrite: async (fence: FenceRef, writes: readonly FencedWrite[]) => {
      const done = await inner.fencedWrite(fence, writes);
      if (holdNextTrim && writes.some((w) => w.op === "trim")) {
        holdNextTrim = false;
        applied();
        await replyHeld;
      }
      return done;
    },
  });
  const taken: string[] = [];
  const live = {
    id: "s1",
    busy: false,
    activeTurn: undefined,
    facts: { downloadedFiles: { catchUp: async () => undefined } },
    takeShared: (m: QueuedMessage) => void taken.push(m.text),
  } as unknown as LiveSession;
  const sessions = sessionsOfA(memory, coordination);
  const gate = sessions.gate as LeaseGate;
  const input = { steer: false, capped: true };
  try {
    const lease = await sessions.gate.offer(live, message("one"), input);
    expect(typeof lease).toBe("object");
    for (const text of ["two", "three", "four"])
      expect(await sessions.gate.offer(live, message(text), input)).toBe("queued");
    expect(taken).toEqual(["one"]);

    // The record's save (carrying "one") removes it from the shared queue; its reply is slow.
    holdNextTrim = true;
    const saved = sessions.records.put("s1", "rec:s1", { saved: 1 }, true, sessions.records.takenSoFar("s1"));
    await removalApplied;
    const collected = gate.queue.collect(live);
    await new Promise((resolve) => setTimeout(resolve, 20));
    answer();
    await saved;
    await collected;
    await gate.queue.collect(live);
    expect(taken).toEqual(["one", "two", "three", "four"]);

    // The next save removes exactly what was taken: nothing untaken is lost, nothing stays.
    await sessions.records.put("s1", "rec:s1", { saved: 2 }, true, sessions.records.takenSoFar("s1"));
    expect(await sharedTexts(inner, "s1")).toEqual([]);
  } finally {
    await sessions.stop();
  }
});
