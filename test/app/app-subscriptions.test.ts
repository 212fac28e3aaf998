/**
 * AppSubscriptions and the app's coordination: on a distributed one (Redis) the subscriptions are
 * shared — one made through one process is listed by another — and on the in-process one the
 * single process keeps its catalog as one record in the store.
 */
import os from "node:os";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppSubscriptions } from "../../src/app/app-subscriptions.js";
import type { Coordination } from "../../src/store/coordination/coordination.js";
import { createCoordination } from "../../src/store/coordination/create-coordination.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/store.js";
import { DEFAULT_SUBSCRIPTION_SETTINGS } from "../../src/subscriptions/subscription-settings.js";
import { storeSlotBudget } from "../../src/store/slot-budget.js";
import { ALICE, FakeDirectory } from "../subscriptions/support.js";
import { type RedisServer, startRedisServer } from "../support/redis-server.js";

const OWNER = { platform: "slack", userId: "UALICE" };

/**
 * App subscriptions opened on `store` and `coordination`, with #deploys in their directory and
 * `approvers` as the configured approvers.
 */
async function openOn(
  store: Store,
  coordination: Coordination,
  approvers: readonly string[] = [],
): Promise<AppSubscriptions> {
  const subscriptions = new AppSubscriptions();
  const directory = new FakeDirectory();
  directory.add("CDEPLOY", "deploys", ["UALICE"]);
  subscriptions.registerDirectory(directory);
  await subscriptions.open({
    store,
    sessions: {
      wake: async () => ({ status: "queued" }),
      isBusy: () => false,
      notify: async () => undefined,
    },
    settings: DEFAULT_SUBSCRIPTION_SETTINGS,
    logger: pino({ level: "silent" }),
    coordination,
    approvers,
    budget: storeSlotBudget(store.space("budgets")),
  });
  return subscriptions;
}

describe("AppSubscriptions on the app's coordination", () => {
  let redis: RedisServer;

  beforeAll(async () => {
    redis = await startRedisServer();
  }, 20_000);

  afterAll(async () => {
    await redis?.stop();
  });

  it("shares the subscriptions between processes on a distributed coordination", async () => {
    const opened: { subscriptions: AppSubscriptions; coordination: Coordination; store: Store }[] = [];
    try {
      for (let i = 0; i < 2; i += 1) {
        const store = await createStore({ url: redis.url, dataDir: os.tmpdir() });
        const coordination = await createCoordination({ url: redis.url, dataDir: os.tmpdir(), store });
        opened.push({ subscriptions: await openOn(store, coordination), coordination, store });
      }
      const [a, b] = opened;
      expect(await a!.subscriptions.subscribe(ALICE, { channel: "#deploys" })).toMatchObject({ ok: true });
      expect((await b!.subscriptions.listForPerson(OWNER)).map((s) => s.channelRef.name)).toEqual([
        "#deploys",
      ]);
      expect(await a!.store.space("subscriptions").get("catalog")).toBeUndefined();
    } finally {
      for (const { subscriptions, coordination, store } of opened) {
        await subscriptions.shutdown();
        await coordination.close();
        await store.close();
      }
    }
  });

  it("keeps one catalog record on the in-process coordination", async () => {
    const store = await createStore({ url: "memory:", dataDir: os.tmpdir() });
    const coordination = await createCoordination({ url: "memory:", dataDir: os.tmpdir(), store });
    const subscriptions = await openOn(store, coordination);
    try {
      await subscriptions.subscribe(ALICE, { channel: "#deploys" });
      const [subscription] = await subscriptions.listForPerson(OWNER);
      expect(await store.space("subscriptions").get("catalog")).toMatchObject({
        data: { ids: [subscription!.id] },
      });
    } finally {
      await subscriptions.shutdown();
      await coordination.close();
      await store.close();
    }
  });

  it("lets a configured approver cancel anyone's subscription by its id, and nobody else", async () => {
    const store = await createStore({ url: "memory:", dataDir: os.tmpdir() });
    const coordination = await createCoordination({ url: "memory:", dataDir: os.tmpdir(), store });
    const subscriptions = await openOn(store, coordination, ["slack:UBOSS"]);
    try {
      await subscriptions.subscribe(ALICE, { channel: "#deploys" });
      const [subscription] = await subscriptions.listForPerson(OWNER);
      const elsewhere = { sessionId: "slack:T1:COTHER:1", platform: "slack" };
      const stranger = await subscriptions.remove({ ...elsewhere, userId: "UEVE" }, subscription!.id);
      expect(stranger.ok).toBe(false);
      const approver = await subscriptions.remove({ ...elsewhere, userId: "UBOSS" }, subscription!.id);
      expect(approver).toMatchObject({ ok: true });
      expect(await subscriptions.listForPerson(OWNER)).toEqual([]);
    } finally {
      await subscriptions.shutdown();
      await coordination.close();
      await store.close();
    }
  });
});
