/**
 * An entry of the shared queue that asks to steer, taken in while no turn runs, goes to the
 * record's queue. The take counted it first and then asked the scheduler to steer (which says no)
 * before adding it: a record built in that pause carried the count without the message, so its
 * save removed the entry from the shared queue while the message was in neither place (as in
 * ee0c80c3). Whether to steer is now decided at once, with no pause between counting and taking in.
 */
import { expect, it } from "vitest";
import type { LiveSession } from "../../src/sessions/live-session.js";
import { memoryCoordinationPerTest } from "./helpers/memory-coordination.js";
import { openS1, queuedMessage as message } from "./helpers/shared-queue-session.js";

const memory = memoryCoordinationPerTest();

it("a steering entry taken in while no turn runs is never removed by a record that lacks it", async () => {
  const saves: Promise<unknown>[] = [];
  const { sessions, live, gate, stored, shared } = openS1(memory, memory.coordination, {
    // No turn runs: steering is refused — and a record built while the take waits for that is saved.
    steer: async (live: LiveSession) => {
      saves.push(live.update((r) => r));
      return false;
    },
  });
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
