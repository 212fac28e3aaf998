/**
 * A Slack message's place in its sender's stream (slack-lanes.ts positionOf), which a stop taken
 * in another process compares with, as a stop announces it: later ts, larger position, the
 * six-digit sequence included; a ts not written as Slack writes it has none (its stop then cancels
 * all its lane holds), nor has an edit's, nor a stop from the Stop button.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { StopsElsewhere } from "../../../src/channels/shared/hand-over-lanes.js";
import type { LanePosition } from "../../../src/channels/shared/lane-stop-marks.js";
import { mention, startInbound } from "./inbound-on-fake.js";

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** SlackInbound whose stops are announced to `announced` (the position each names). */
async function startAnnouncing() {
  const announced: (LanePosition | undefined)[] = [];
  const stopsElsewhere: StopsElsewhere = {
    announce: (_key, position) => void announced.push(position),
    listen: async () => {},
    close: async () => {},
  };
  const started = await startInbound(cleanup, { stopsElsewhere });
  /** Ana's stop in a thread of #general, with its ts `ts`, and what it announced. */
  const stopAt = async (ts: string, edited?: boolean) => {
    const { event, envelope } = mention(started.fake, "U1", "1700000000.000001", "stop", ts);
    await started.inbound.handle(edited ? { ...event, edited: { user: "U1", ts } } : event, envelope);
    return announced.at(-1);
  };
  return { ...started, announced, stopAt };
}

describe("slack: where a message stands in its sender's lane", () => {
  it("orders stops as their ts do, within one second too", async () => {
    const { stopAt, announced } = await startAnnouncing();
    for (const ts of ["1700000000.000100", "1700000000.000200", "1700000001.000001"]) await stopAt(ts);
    expect(announced).toEqual([1700000000000100, 1700000000000200, 1700000001000001]);
  });

  it("gives none for a ts not written as Slack writes it, nor for an edit", async () => {
    const { stopAt, announced, fake } = await startAnnouncing();
    for (const ts of ["1700000000.1", "9999999999999.000000"]) await stopAt(ts);
    // An edit is heard for an hour after its message: a recent one.
    await stopAt(fake.state.nextTs(), true);
    expect(announced).toEqual([undefined, undefined, undefined]);
  });

  it("gives none for a stop from the Stop button or the slash command", async () => {
    const { inbound, fake, announced } = await startAnnouncing();
    const target = {
      platform: "slack",
      workspace: fake.state.teamId,
      channel: "C1",
      thread: "1700000000.000001",
    };
    await inbound.stopLane(target, "U1");
    expect(announced).toEqual([undefined]);
  });
});
