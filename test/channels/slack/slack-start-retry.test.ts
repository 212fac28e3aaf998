/**
 * A Slack channel whose start fails after it began (here: the subscribe to the other processes'
 * stops, Redis briefly unreachable) undoes what it began, so the next attempt starts it for real:
 * the events server listens and the subscription hears the stops other processes announce.
 */
import os from "node:os";
import pino from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  type LaneStopCoordination,
  laneStopChannel,
} from "../../../src/channels/shared/lane-stop-broadcast.js";
import { SlackChannel } from "../../../src/channels/slack/slack-channel.js";
import type { Coordination } from "../../../src/store/coordination/coordination.js";
import { createCoordination } from "../../../src/store/coordination/create-coordination.js";
import { createStore } from "../../../src/store/create-store.js";
import type { Store } from "../../../src/store/store.js";
import { startFakeSlack } from "../../fakes/fake-slack/index.js";
import { type RedisServer, startRedisServer } from "../../support/redis-server.js";
import { OPEN_UPLOADS } from "../../support/test-upload-gate.js";
import { FakeService } from "./fake-service.js";

describe("a Slack channel whose start failed on the lane-stop subscribe", () => {
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

  it("starts for real on the next attempt: the events server listens and the stops are heard", async () => {
    const fake = await startFakeSlack();
    cleanup.push(() => fake.close());
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
    const channel = new SlackChannel({
      botToken: fake.state.botToken,
      signingSecret: "test-signing-secret",
      apiUrl: fake.apiUrl,
      http: { port: 0, path: "/slack/events", host: "127.0.0.1" },
      requireMentionInThreads: false,
      allowedUsers: [],
      allowedChannels: [],
      allowedBots: [],
      fileMaxBytes: 1_000,
      uploads: OPEN_UPLOADS,
      workspaceRoot: "/tmp",
      service: new FakeService(),
      logger: pino({ level: "silent" }),
      laneStops,
    });
    cleanup.push(() => channel.stop());

    await expect(channel.start()).rejects.toThrow("subscribe failed");
    expect(channel.health().ready).toBe(false);
    await channel.start();

    expect(channel.address()?.port).toBeGreaterThan(0);
    expect(channel.health().ready).toBe(true);
    const announcement = JSON.stringify({ from: "another-process", lane: "D1:1700000000.000100:U1" });
    await (await coordination()).publish(laneStopChannel("slack"), announcement);
    expect(await announcementHeard).toBe(announcement);
  });
});
