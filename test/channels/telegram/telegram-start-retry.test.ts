/**
 * A Telegram channel whose start fails after it began (here: the subscribe to the other processes'
 * stops, Redis briefly unreachable; or the receiver's, setWebhook refused) undoes what it began, so
 * the supervisor's next attempt starts it for real: the webhook listens, and the subscription
 * hears the stops other processes announce.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  type LaneStopCoordination,
  laneStopChannel,
} from "../../../src/channels/shared/lane-stop-broadcast.js";
import { TelegramChannel } from "../../../src/channels/telegram/telegram-channel.js";
import type { Coordination } from "../../../src/store/coordination/coordination.js";
import { createCoordination } from "../../../src/store/coordination/create-coordination.js";
import { createStore } from "../../../src/store/create-store.js";
import type { Store } from "../../../src/store/store.js";
import { storeSlotBudget } from "../../../src/store/slot-budget.js";
import { startFakeTelegram } from "../../fakes/fake-telegram/fake-telegram.js";
import { type RedisServer, startRedisServer } from "../../support/redis-server.js";
import { ALICE, fakeTelegramChannelOptions, ScriptedService, TEST_WEBHOOK } from "./harness.js";

describe("a Telegram channel whose start failed on the lane-stop subscribe", () => {
  const cleanup: (() => Promise<void>)[] = [];
  let redis: RedisServer;
  let store: Store;

  beforeAll(async () => {
    redis = await startRedisServer();
    store = await createStore({ url: redis.url, dataDir: os.tmpdir() });
  }, 20_000);

  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  afterAll(async () => {
    await store?.close();
    await redis?.stop();
  });

  const coordination = async (): Promise<Coordination> => {
    const made = await createCoordination({ url: redis.url, dataDir: os.tmpdir(), store });
    cleanup.push(() => made.close());
    return made;
  };

  it("starts for real on the supervisor's next attempt: the webhook listens and the stops are heard", async () => {
    const tg = await startFakeTelegram();
    cleanup.push(() => tg.close());
    const root = await mkdtemp(join(os.tmpdir(), "tg-start-retry-"));
    cleanup.push(() => rm(root, { recursive: true, force: true }));
    const coordinationOfChannel = await coordination();
    let failures = 1;
    let heard!: (message: string) => void;
    const announcementHeard = new Promise<string>((resolve) => {
      heard = resolve;
    });
    // The real coordination, its first subscribe failing; what the channel's listener hears is seen here too.
    const laneStops: LaneStopCoordination = {
      publish: (channel, message) => coordinationOfChannel.publish(channel, message),
      subscribe: (channel, listener) =>
        failures-- > 0
          ? Promise.reject(new Error("subscribe failed"))
          : coordinationOfChannel.subscribe(channel, (message) => {
              listener(message);
              heard(message);
            }),
    };
    const channel = new TelegramChannel(
      fakeTelegramChannelOptions(tg, {
        allowedUsers: [String(ALICE.id)],
        allowedChats: [],
        workspaceRoot: root,
        service: new ScriptedService(),
        logger: pino({ level: "silent" }),
        accessStore: store.space("grants"),
        budget: storeSlotBudget(store.space("budgets")),
        webhook: TEST_WEBHOOK,
        laneStops,
      }),
    );
    cleanup.push(() => channel.stop());

    await expect(channel.start()).rejects.toThrow("subscribe failed");
    expect(channel.webhookPort()).toBeUndefined();
    // The supervisor's attempt stops the channel it could not start, and tries again later.
    await channel.stop();
    await channel.start();

    expect(channel.webhookPort()).toBeGreaterThan(0);
    expect(channel.health().ready).toBe(true);
    const announcement = JSON.stringify({ from: "another-process", lane: "1001:1001" });
    await (await coordination()).publish(laneStopChannel("telegram"), announcement);
    expect(await announcementHeard).toBe(announcement);
  });

  it("starts for real on the next attempt after setWebhook failed, the failed one leaving no server listening", async () => {
    const tg = await startFakeTelegram();
    cleanup.push(() => tg.close());
    const root = await mkdtemp(join(os.tmpdir(), "tg-start-retry-"));
    cleanup.push(() => rm(root, { recursive: true, force: true }));
    const channel = new TelegramChannel(
      fakeTelegramChannelOptions(tg, {
        allowedUsers: [String(ALICE.id)],
        allowedChats: [],
        workspaceRoot: root,
        service: new ScriptedService(),
        logger: pino({ level: "silent" }),
        accessStore: store.space("grants"),
        budget: storeSlotBudget(store.space("budgets")),
        webhook: TEST_WEBHOOK,
      }),
    );
    cleanup.push(() => channel.stop());
    tg.failNext("setWebhook", 400, "Bad Request: bad webhook");

    await expect(channel.start()).rejects.toThrow();
    // The failed attempt left no server listening.
    expect(channel.webhookPort()).toBeUndefined();
    await channel.start();

    expect(channel.webhookPort()).toBeGreaterThan(0);
    expect(channel.health().ready).toBe(true);
    expect(tg.callsOf("setWebhook")).toHaveLength(2);
  });
});
