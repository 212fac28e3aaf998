/**
 * A Slack channel whose start fails after it began (here: the subscribe to the other processes'
 * stops, Redis briefly unreachable) undoes what it began, so the next attempt starts it for real:
 * the events server listens and the subscription hears the stops other processes announce.
 */
import pino from "pino";
import { describe, expect, it } from "vitest";
import { laneStopChannel } from "../../../src/channels/shared/lane-stop-broadcast.js";
import { startFakeSlack } from "../../fakes/fake-slack/index.js";
import { processesOnOneRedis, subscribeFailingOnce } from "../shared/support-lane-stops.js";
import { FakeService } from "./fake-service.js";
import { httpChannelOn } from "./http-channel-on-fake.js";

describe("a Slack channel whose start failed on the lane-stop subscribe", () => {
  const processes = processesOnOneRedis();
  const { cleanup } = processes;

  it("starts for real on the next attempt: the events server listens and the stops are heard", async () => {
    const fake = await startFakeSlack();
    cleanup.push(() => fake.close());
    const laneStops = subscribeFailingOnce(await processes.coordination());
    const channel = httpChannelOn(fake, {
      service: new FakeService(),
      logger: pino({ level: "silent" }),
      laneStops: laneStops.coordination,
    });
    cleanup.push(() => channel.stop());

    await expect(channel.start()).rejects.toThrow("subscribe failed");
    expect(channel.health().ready).toBe(false);
    await channel.start();

    expect(channel.address()?.port).toBeGreaterThan(0);
    expect(channel.health().ready).toBe(true);
    const announcement = JSON.stringify({ from: "another-process", lane: "D1:1700000000.000100:U1" });
    await (await processes.coordination()).publish(laneStopChannel("slack"), announcement);
    expect(await laneStops.firstHeard).toBe(announcement);
  });
});
