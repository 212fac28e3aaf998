/**
 * A cancel that lands while a task is being changed stays a cancel: a due run that had re-read its
 * task before the cancel (on this process or another) does not write the task back nor run it,
 * and a thread switched to a new session ("new") does not bring back a task cancelled while its
 * tasks were being re-pointed. The store here holds a chosen read of a task record, after reading
 * it, so the cancel falls between that read and the write it leads to.
 */
import os from "node:os";
import { describe, expect, it } from "vitest";
import { createStore } from "../../src/store/create-store.js";
import { holdingStore } from "./support-holding.js";
import { ANA_ACTOR, advance, closeAfterEach, stored } from "./support-processes.js";
import { ANA_HOME, flush, type Harness, MIN, openHarness } from "./support.js";

const closeLater = closeAfterEach();

/** A memory store whose task-record reads can be held (support-holding.ts). */
async function memoryHoldingStore() {
  return holdingStore(await createStore({ url: "memory:", dataDir: os.tmpdir() }));
}

async function created(h: Harness): Promise<string> {
  const outcome = await h.service.create(ANA_HOME, {
    prompt: "hourly check",
    cron: "0 * * * *",
    timezone: "UTC",
  });
  const id = /tsk_[0-9a-f]{12}/.exec(outcome.message)?.[0];
  if (!outcome.ok || id === undefined) throw new Error(outcome.message);
  return id;
}

describe("a cancel landing while a task is being changed stays a cancel", () => {
  it("a task cancelled while its due run is starting (after the run re-read it) is not written back nor run", async () => {
    const { store, holdNextTaskRead } = await memoryHoldingStore();
    const h = await openHarness({ store });
    closeLater(h);
    const id = await created(h);
    await advance([h], 59 * MIN);
    const hold = holdNextTaskRead();
    h.clock.advance(MIN); // due: claimed, then re-read (held here)
    await hold.reached;
    expect((await h.service.cancel(ANA_ACTOR, id)).ok).toBe(true);
    hold.release();
    await flush(h.service);
    expect(await stored(h)).toEqual([]);
    await advance([h], 120 * MIN);
    expect(h.sessions.turns).toEqual([]);
  });

  it("a task cancelled on another process while its due run is starting here stays cancelled on both, and does not run", async () => {
    const { store, holdNextTaskRead } = await memoryHoldingStore();
    const a = await openHarness({ store });
    const b = await openHarness({ store, clock: a.clock });
    closeLater(a, { ...b, close: () => b.service.shutdown() });
    const id = await created(a);
    await stored(b);
    await b.service.shutdown(); // b only cancels; a runs the task
    await advance([a], 59 * MIN);
    const hold = holdNextTaskRead();
    a.clock.advance(MIN);
    await hold.reached;
    expect((await b.service.cancel(ANA_ACTOR, id)).ok).toBe(true);
    hold.release();
    await flush(a.service);
    expect([await stored(a), await stored(b)]).toEqual([[], []]);
    await advance([a], 120 * MIN);
    expect(a.sessions.turns).toEqual([]);
  });

  it("a task cancelled while a thread switch re-points its tasks stays cancelled", async () => {
    const { store, holdNextTaskRead } = await memoryHoldingStore();
    const h = await openHarness({ store });
    closeLater(h);
    const id = await created(h);
    const hold = holdNextTaskRead();
    const moving = h.service.moveSession("s-home", "s-new");
    await hold.reached;
    const cancelling = h.service.cancel(ANA_ACTOR, id);
    await flush(); // the cancel goes as far as it can while the switch's read is held
    hold.release();
    expect((await cancelling).ok).toBe(true);
    await moving;
    expect(await stored(h)).toEqual([]);
  });
});
