/**
 * A lane-stop broadcast closed while its subscribe is still being made (a channel's start aborted
 * by the supervisor's deadline, its stop run meanwhile) leaves nothing subscribed once the subscribe
 * is made, and one whose subscribe failed subscribes afresh on the next listen; on a real redis-server.
 */
import pino from "pino";
import { describe, expect, it } from "vitest";
import {
  LaneStopBroadcast,
  type LaneStopCoordination,
  laneStopChannel,
} from "../../../src/channels/shared/lane-stop-broadcast.js";
import type { Coordination } from "../../../src/store/coordination/coordination.js";
import { processesOnOneRedis, subscribeFailingOnce } from "./support-lane-stops.js";

const logger = pino({ level: "silent" });
const LANE = "C1:1700000000.000100:U_ALICE";

describe("closing a lane-stop broadcast", () => {
  const processes = processesOnOneRedis();
  const coordination = processes.coordination;

  /** Resolves once `on` delivers the next message on the stops' channel (to a listener subscribed after the others). */
  const nextOn = async (on: Coordination): Promise<void> => {
    let heard!: () => void;
    const delivered = new Promise<void>((resolve) => {
      heard = resolve;
    });
    const unsubscribe = await on.subscribe(laneStopChannel("slack"), () => heard());
    await delivered;
    await unsubscribe();
  };

  it("a close during a slow subscribe leaves no subscription: a later announcement reaches no lanes", async () => {
    const on = await coordination();
    let subscribeNow!: () => void;
    const slow = new Promise<void>((resolve) => {
      subscribeNow = resolve;
    });
    const slowly: LaneStopCoordination = {
      publish: (channel, message) => on.publish(channel, message),
      subscribe: async (channel, listener) => {
        await slow;
        return on.subscribe(channel, listener);
      },
    };
    const broadcast = new LaneStopBroadcast({ coordination: slowly, platform: "slack", logger });
    const stopped: string[] = [];
    const listening = broadcast.listen({ stoppedElsewhere: async (key) => void stopped.push(key) });
    const closing = broadcast.close();
    subscribeNow();
    await listening;
    await closing;

    const delivered = nextOn(on);
    new LaneStopBroadcast({ coordination: await coordination(), platform: "slack", logger }).announce(
      LANE,
      undefined,
    );
    await delivered;
    expect(stopped).toEqual([]);
  });

  it("a listen after a failed subscribe subscribes afresh and hears the other processes' stops", async () => {
    const on = await coordination();
    const flaky = subscribeFailingOnce(on).coordination;
    const broadcast = new LaneStopBroadcast({ coordination: flaky, platform: "slack", logger });
    const stopped: string[] = [];
    const lanes = { stoppedElsewhere: async (key: string) => void stopped.push(key) };
    await expect(broadcast.listen(lanes)).rejects.toThrow("subscribe failed");
    await broadcast.listen(lanes);

    const delivered = nextOn(on);
    new LaneStopBroadcast({ coordination: await coordination(), platform: "slack", logger }).announce(
      LANE,
      undefined,
    );
    await delivered;
    await broadcast.close();
    expect(stopped).toEqual([LANE]);
  });
});
