/**
 * TaskRegistry.update is a compare-and-set on the store (here a SQLite file, two connections to
 * it standing for two processes): it writes only over the record it read, asks its change again
 * when the other connection wrote the record meanwhile, leaves a task the other removed meanwhile
 * removed, never writes a catalog, and gives up with an error when others keep changing the task.
 * A catalog shard is changed the same way by `put` and `remove`: a create and a cancel of two
 * tasks of one shard on the two connections keep both changes, whichever reads the shard first.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { newTaskId, type ScheduledTask } from "../../src/schedules/scheduled-task.js";
import { TASK_CATALOG_KIND, TASK_KIND, TaskRegistry, taskKey } from "../../src/schedules/task-registry.js";
import { createStore } from "../../src/store/create-store.js";
import type { KeyValueSpace, Store } from "../../src/store/store.js";
import { spaceLike } from "../support/space-like.js";
import { toVersioned } from "../../src/store/versioned.js";
import { holdingStore } from "./support-holding.js";
import { HOME, iso, T0 } from "./support.js";

let dataDir = "";
let stores: Store[] = [];
beforeEach(() => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), "schedules-cas-"));
});
afterEach(async () => {
  for (const store of stores) await store.close();
  stores = [];
  rmSync(dataDir, { recursive: true, force: true });
});

/** A new connection to the test's SQLite file. */
async function connection(): Promise<Store> {
  const store = await createStore({ dataDir });
  stores.push(store);
  return store;
}

const reportError = (error: unknown) => {
  throw error;
};

function aTask(id = newTaskId("task")): ScheduledTask {
  return {
    id,
    kind: "task",
    sessionId: "s-home",
    target: HOME,
    createdBy: { id: "U1ANA", name: "Ana" },
    prompt: "hourly check",
    promptBy: "person",
    schedule: { type: "cron", expression: "0 * * * *", timezone: "UTC" },
    status: "active",
    createdAt: iso(T0),
    nextRunAt: iso(T0 + 3_600_000),
    runs: 0,
    failures: 0,
  };
}

const catalogOf = (space: KeyValueSpace, id: string) => space.get(`catalog:${id.slice(-1)}`);
const moved = (task: ScheduledTask): ScheduledTask => ({ ...task, sessionId: "s-new" });

describe("TaskRegistry.update: compare-and-set on SQLite", () => {
  it("writes the change over the record it read, once, and leaves the catalog as it is", async () => {
    const space = (await connection()).space("schedules");
    const registry = await TaskRegistry.load(space, reportError);
    const task = await registry.put(aTask());
    // A record its catalog no longer names (a remove between its two writes): not listed again.
    await space.set(`catalog:${task.id.slice(-1)}`, toVersioned(TASK_CATALOG_KIND, { ids: [] }));
    let asked = 0;
    const written = await registry.update(task.id, (current) => {
      asked += 1;
      return moved(current);
    });
    expect(asked).toBe(1);
    expect(written?.sessionId).toBe("s-new");
    expect(await space.get(taskKey(task.id))).toEqual(toVersioned(TASK_KIND, written));
    expect(await catalogOf(space, task.id)).toMatchObject({ data: { ids: [] } });
  });

  it("a task the other connection removed between the read and the write stays removed, and unlisted", async () => {
    const holding = holdingStore(await connection());
    const here = await TaskRegistry.load(holding.store.space("schedules"), reportError);
    const task = await here.put(aTask());
    const there = await TaskRegistry.load((await connection()).space("schedules"), reportError);
    const hold = holding.holdNextTaskRead();
    let asked = 0;
    const updating = here.update(task.id, (current) => {
      asked += 1;
      return moved(current);
    });
    await hold.reached;
    expect((await there.remove(task.id))?.id).toBe(task.id);
    hold.release();
    expect(await updating).toBeUndefined();
    expect(asked).toBe(1);
    const space = holding.store.space("schedules");
    expect(await space.get(taskKey(task.id))).toBeUndefined();
    expect(await catalogOf(space, task.id)).toMatchObject({ data: { ids: [] } });
    expect(here.get(task.id)).toBeUndefined();
  });

  it("a task the other connection changed between the read and the write is read again and changed as it is now", async () => {
    const holding = holdingStore(await connection());
    const here = await TaskRegistry.load(holding.store.space("schedules"), reportError);
    const task = await here.put(aTask());
    const there = await TaskRegistry.load((await connection()).space("schedules"), reportError);
    const hold = holding.holdNextTaskRead();
    const seen: ScheduledTask[] = [];
    const updating = here.update(task.id, (current) => {
      seen.push(current);
      return moved(current);
    });
    await hold.reached;
    await there.update(task.id, (current) => ({ ...current, status: "paused", statusNote: "channel gone" }));
    hold.release();
    const written = await updating;
    expect(seen.map((t) => t.status)).toEqual(["active", "paused"]);
    expect([written?.sessionId, written?.status]).toEqual(["s-new", "paused"]);
    expect(await there.reload(task.id)).toEqual(written);
  });

  it("gives up with an error, leaving the record as the others wrote it, when they change it before every write", async () => {
    const space = (await connection()).space("schedules");
    const other = (await connection()).space("schedules");
    let changes = 0;
    const contested = spaceLike(space, {
      replaceIf: async (key, expected, value, ttlMs) => {
        changes += 1;
        await other.set(key, toVersioned(TASK_KIND, { ...task, runs: changes }));
        return space.replaceIf(key, expected, value, ttlMs);
      },
    });
    const registry = await TaskRegistry.load(contested, reportError);
    const task = await registry.put(aTask());
    await expect(registry.update(task.id, moved)).rejects.toThrow(
      `scheduled task ${task.id} was changed by other processes 16 times`,
    );
    expect(await space.get(taskKey(task.id))).toEqual(toVersioned(TASK_KIND, { ...task, runs: 16 }));
  });
});

describe("TaskRegistry catalog shards: compare-and-set on SQLite", () => {
  /** Two ids of one shard (their last hex digit). */
  const [X, Z] = ["tsk_00000000000a", "tsk_00000000001a"];

  async function twoConnections() {
    const holding = holdingStore(await connection());
    const here = await TaskRegistry.load(holding.store.space("schedules"), reportError);
    const there = await TaskRegistry.load((await connection()).space("schedules"), reportError);
    return { holding, here, there, space: holding.store.space("schedules") };
  }

  it("a task removed on the other connection while a create here read the shard is not listed again", async () => {
    const { holding, here, there, space } = await twoConnections();
    await there.put(aTask(X));
    const hold = holding.holdNextRead("catalog:");
    const creating = here.put(aTask(Z));
    await hold.reached;
    await there.remove(X);
    hold.release();
    await creating;
    expect(await catalogOf(space, X)).toMatchObject({ data: { ids: [Z] } });
    const reloaded = await TaskRegistry.load(space, reportError);
    expect(reloaded.all().map((t) => t.id)).toEqual([Z]);
  });

  it("a task created on the other connection while a remove here read the shard stays listed", async () => {
    const { holding, here, there, space } = await twoConnections();
    await here.put(aTask(X));
    const hold = holding.holdNextRead("catalog:");
    const removing = here.remove(X);
    await hold.reached;
    await there.put(aTask(Z));
    hold.release();
    await removing;
    expect(await catalogOf(space, X)).toMatchObject({ data: { ids: [Z] } });
    expect(await space.get(taskKey(X))).toBeUndefined();
    const reloaded = await TaskRegistry.load(space, reportError);
    expect(reloaded.all().map((t) => t.id)).toEqual([Z]);
  });
});
