/**
 * A Slack message's place in its sender's stream (slack-inbound.ts positionOf), which a stop taken
 * in another process compares with: later ts, larger position, the six-digit sequence included;
 * a ts not written as Slack writes it has none (its stop then cancels all its lane holds).
 */
import { describe, expect, it } from "vitest";
import { positionOf } from "../../../src/channels/slack/slack-inbound.js";

describe("positionOf", () => {
  it("orders messages as their ts do, within one second too", () => {
    const positions = ["1700000000.000100", "1700000000.000200", "1700000001.000001"].map(positionOf);
    expect(positions).toEqual([1700000000000100, 1700000000000200, 1700000001000001]);
  });

  it("gives none for a ts not written as Slack writes it", () => {
    expect(["1700000000", "1700000000.1", "x.000100", "9999999999999.000000"].map(positionOf)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });
});
