/**
 * A Telegram channel whose start fails after it began (here: the subscribe to the other processes'
 * stops, Redis briefly unreachable; or the receiver's, setWebhook refused) undoes what it began, so
 * the supervisor's next attempt starts it for real: the webhook listens, and the subscription
 * hears the stops other processes announce. A start after a clean stop starts it again too. Undoing never replaces the start's own error (it tells
 * the supervisor whether to retry), and a stop resolves, also when the subscription cannot be
 * ended.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import pino from "pino";
import { describe, expect, it } from "vitest";
import {
  type LaneStopCoordination,
  laneStopChannel,
} from "../../../src/channels/shared/lane-stop-broadcast.js";
import { TelegramChannel } from "../../../src/channels/telegram/telegram-channel.js";
import { storeSlotBudget } from "../../../src/store/slot-budget.js";
import { startFakeTelegram } from "../../fakes/fake-telegram/fake-telegram.js";
import { processesOnOneRedis, subscribeFailingOnce } from "../shared/support-lane-stops.js";
import { ALICE, fakeTelegramChannelOptions, ScriptedService, TEST_WEBHOOK } from "./harness.js";

describe("a Telegram channel whose start failed on the lane-stop subscribe", () => {
  const processes = processesOnOneRedis();
  const { cleanup } = processes;

  /** A fake Telegram and a webhook channel on it (with `laneStops` when given), not yet started. */
  const channelOnFake = async (laneStops?: LaneStopCoordination) => {
    const tg = await startFakeTelegram();
    cleanup.push(() => tg.close());
    const root = await mkdtemp(join(os.tmpdir(), "tg-start-retry-"));
    cleanup.push(() => rm(root, { recursive: true, force: true }));
    const store = processes.store();
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
        ...(laneStops ? { laneStops } : {}),
      }),
    );
    cleanup.push(() => channel.stop());
    return { tg, channel };
  };

  it("starts for real on the supervisor's next attempt: the webhook listens and the stops are heard", async () => {
    const laneStops = subscribeFailingOnce(await processes.coordination());
    const { channel } = await channelOnFake(laneStops.coordination);

    await expect(channel.start()).rejects.toThrow("subscribe failed");
    expect(channel.webhookPort()).toBeUndefined();
    // The supervisor's attempt stops the channel it could not start, and tries again later.
    await channel.stop();
    await channel.start();

    expect(channel.webhookPort()).toBeGreaterThan(0);
    expect(channel.health().ready).toBe(true);
    const announcement = JSON.stringify({ from: "another-process", lane: "1001:1001" });
    await (await processes.coordination()).publish(laneStopChannel("telegram"), announcement);
    expect(await laneStops.firstHeard).toBe(announcement);
  });

  it("starts for real on the next attempt after setWebhook failed, the failed one leaving no server listening", async () => {
    const { tg, channel } = await channelOnFake();
    tg.failNext("setWebhook", 400, "Bad Request: bad webhook");

    await expect(channel.start()).rejects.toThrow();
    // The failed attempt left no server listening.
    expect(channel.webhookPort()).toBeUndefined();
    await channel.start();

    expect(channel.webhookPort()).toBeGreaterThan(0);
    expect(channel.health().ready).toBe(true);
    expect(tg.callsOf("setWebhook")).toHaveLength(2);
  });

  it("starts again after a clean stop: the webhook listens once more", async () => {
    const { tg, channel } = await channelOnFake();
    await channel.start();
    await channel.stop();
    expect(channel.webhookPort()).toBeUndefined();

    await channel.start();

    expect(channel.webhookPort()).toBeGreaterThan(0);
    expect(channel.health().ready).toBe(true);
    expect(tg.callsOf("setWebhook")).toHaveLength(2);
  });

  /** Coordination whose subscriptions cannot be ended (Redis refuses commands while offline). */
  const unsubscribeFails: LaneStopCoordination = {
    publish: async () => true,
    subscribe: async () => async () => {
      throw new Error("unsubscribe failed: the client is offline");
    },
  };

  it("reports setWebhook's refusal, not the failing unsubscribe of its undoing", async () => {
    const { tg, channel } = await channelOnFake(unsubscribeFails);
    tg.failNext("setWebhook", 400, "Bad Request: bad webhook");
    await expect(channel.start()).rejects.toThrow(/webhook/i);
  });

  it("stops after a good start though the subscription cannot be ended", async () => {
    const { channel } = await channelOnFake(unsubscribeFails);
    await channel.start();
    await expect(channel.stop()).resolves.toBeUndefined();
  });
});
