/**
 * A Telegram channel undoing a failed start, and stopping, when the lane-stop subscription cannot
 * be ended (the coordination unreachable: Redis refuses commands while offline): the start's own
 * error is the one reported — it tells the supervisor whether to retry — and a stop still resolves.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterEach, expect, it } from "vitest";
import type { LaneStopCoordination } from "../../../src/channels/shared/lane-stop-broadcast.js";
import { TelegramChannel } from "../../../src/channels/telegram/telegram-channel.js";
import { createStore } from "../../../src/store/create-store.js";
import { storeSlotBudget } from "../../../src/store/slot-budget.js";
import { startFakeTelegram } from "../../fakes/fake-telegram/fake-telegram.js";
import { ALICE, fakeTelegramChannelOptions, ScriptedService, TEST_WEBHOOK } from "./harness.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

/** Coordination whose subscriptions cannot be ended. */
const unsubscribeFails: LaneStopCoordination = {
  publish: async () => true,
  subscribe: async () => async () => {
    throw new Error("unsubscribe failed: the client is offline");
  },
};

async function webhookChannel() {
  const tg = await startFakeTelegram();
  cleanups.push(() => tg.close());
  const root = await mkdtemp(join(os.tmpdir(), "tg-undo-start-"));
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  const store = await createStore({ url: "memory:", dataDir: root });
  cleanups.push(() => store.close());
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
      laneStops: unsubscribeFails,
    }),
  );
  cleanups.push(() => channel.stop());
  return { tg, channel };
}

it("reports setWebhook's refusal, not the failing unsubscribe of its undoing", async () => {
  const { tg, channel } = await webhookChannel();
  tg.failNext("setWebhook", 400, "Bad Request: bad webhook");
  await expect(channel.start()).rejects.toThrow(/webhook/i);
});

it("stops after a good start though the subscription cannot be ended", async () => {
  const { channel } = await webhookChannel();
  await channel.start();
  await expect(channel.stop()).resolves.toBeUndefined();
});
