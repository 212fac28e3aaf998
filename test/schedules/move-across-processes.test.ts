/**
 * "new" re-pointing a thread's tasks and wake-ups (ScheduleService.moveSession) on one process
 * while another process on the same real redis-server (its own connection) cancels or pauses one:
 * each task is changed by compare-and-set, so a cancel that lands between this process's read of
 * the task and its write stays a cancel — the task neither comes back nor is listed in the
 * catalog again, and never runs — and a pause made there is kept under the new session.
 */
import os from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Outcome } from "../../src/subscriptions/channel-access.js";
import { createStore } from "../../src/store/create-store.js";
import { type RedisServer, startRedisServer } from "../support/redis-server.js";
import { holdingStore } from "./support-holding.js";
import { ANA_ACTOR, advance, closeAfterEach, stored } from "./support-processes.js";
import { ANA_HOME, type Harness, MIN, openHarness } from "./support.js";

let redis: RedisServer | undefined;
beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(async () => {
  await redis?.stop();
});

const closeLater = closeAfterEach();
let deployments = 0;

/**
 * Two processes on one redis-server, each on its own connection, with one clock: `a`'s reads of
 * task records can be held. A key prefix of their own keeps each test's tasks apart.
 */
async function twoProcesses() {
  deployments += 1;
  const open = () => createStore({ url: redis!.url, dataDir: os.tmpdir(), keyPrefix: `move${deployments}` });
  const holding = holdingStore(await open());
  const a = await openHarness({ store: holding.store, extra: { owner: "a" } });
  const b = await openHarness({ store: await open(), clock: a.clock, extra: { owner: "b" } });
  closeLater(a, b);
  return { a, b, holdNextTaskRead: holding.holdNextTaskRead };
}

/** The id in a create's or wake-up's answer. */
function idOf(outcome: Outcome): string {
  const id = /(tsk|wak)_[0-9a-f]{12}/.exec(outcome.message)?.[0];
  if (!outcome.ok || id === undefined) throw new Error(outcome.message);
  return id;
}

const kinds: { name: string; make: (h: Harness) => Promise<Outcome> }[] = [
  {
    name: "an hourly task",
    make: (h) => h.service.create(ANA_HOME, { prompt: "hourly check", cron: "0 * * * *", timezone: "UTC" }),
  },
  { name: "a wake-up", make: (h) => h.service.wakeLater(ANA_HOME, { in_s: 30 * 60, note: "look again" }) },
];

describe.each(kinds)("'new' on one process while another changes $name (redis-server)", ({ make }) => {
  it("cancelled on the other process between this one's read and write: it stays cancelled, out of the catalog, and never runs", async () => {
    const { a, b, holdNextTaskRead } = await twoProcesses();
    const id = idOf(await make(a));
    expect((await stored(b)).map((t) => t.id)).toEqual([id]);
    const hold = holdNextTaskRead();
    const moving = a.service.moveSession("s-home", "s-new");
    await hold.reached; // a has read the task for its update
    expect((await b.service.cancel(ANA_ACTOR, id)).ok).toBe(true);
    hold.release();
    await moving;
    const space = b.store.space("schedules");
    expect(await space.get(`task:${id}`)).toBeUndefined();
    expect(await space.get(`catalog:${id.slice(-1)}`)).toMatchObject({ data: { ids: [] } });
    expect([await stored(a), await stored(b)]).toEqual([[], []]);
    await advance([a, b], 120 * MIN);
    expect([...a.sessions.turns, ...b.sessions.turns]).toEqual([]);
    expect(a.errors).toEqual([]);
  });

  it("paused on the other process between this one's read and write: it moves to the new session and stays paused", async () => {
    const { a, b, holdNextTaskRead } = await twoProcesses();
    const id = idOf(await make(a));
    await stored(b);
    const hold = holdNextTaskRead();
    const moving = a.service.moveSession("s-home", "s-new");
    await hold.reached;
    expect(await b.service.channelGone(ANA_HOME.target)).toBe(1);
    hold.release();
    await moving;
    for (const h of [a, b])
      expect((await stored(h)).map((t) => [t.id, t.sessionId, t.status])).toEqual([[id, "s-new", "paused"]]);
    await advance([a, b], 120 * MIN);
    expect([...a.sessions.turns, ...b.sessions.turns]).toEqual([]);
  });
});
