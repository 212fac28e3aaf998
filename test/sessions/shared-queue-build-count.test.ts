/**
 * A record save removes from the shared queue the entries the record carries, and no others. The
 * record is built when LiveSession.update is called, its save runs later (after the saves before
 * it): an entry taken in between is not in it. The count of entries to remove was read when the
 * save ran, so that entry left the shared queue in a save that did not hold it — lost if the
 * holder died or lost its lease before its next save. The count is now read with the record.
 */
import { expect, it } from "vitest";
import type { Coordination, FencedWrite, FenceRef } from "../../src/store/coordination/coordination.js";
import { memoryCoordinationPerTest } from "./helpers/memory-coordination.js";
import { openS1, queuedMessage as message } from "./helpers/shared-queue-session.js";

const memory = memoryCoordinationPerTest();

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
  const { sessions, live, gate, stored, shared } = openS1(memory, coordination);
  const input = { steer: false, capped: true };
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
