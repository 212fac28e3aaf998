import { describe, expect, it } from "vitest";
import { MAX_KEY_LENGTH } from "../../../src/store/keyv-space.js";
import { commandKeys, pressKeys } from "../../../src/channels/slack/slack-interaction-keys.js";

const press = (overrides: Partial<Parameters<typeof pressKeys>[0]> = {}) =>
  pressKeys({
    user: "U1",
    channel: "C1",
    messageTs: "1700000000.000100",
    action: { action_id: "coworker_stop", block_id: "b1", action_ts: "1700000001.000200" },
    ...overrides,
  });

describe("slack interaction keys", () => {
  it("knows a slash command and a press by their trigger id, the same key for both kinds", () => {
    expect(commandKeys({ trigger_id: "13345224609.738474920.8088930838d88f008e0" })).toHaveLength(1);
    expect(commandKeys({ trigger_id: "tr1" })).toEqual(press({ trigger_id: "tr1" }));
    expect(commandKeys({ trigger_id: "tr1" })).not.toEqual(commandKeys({ trigger_id: "tr2" }));
  });

  it("knows a press without a trigger id by who pressed, its action's ids and action_ts", () => {
    expect(press()).toEqual(press());
    expect(press()).not.toEqual(
      press({ action: { action_id: "coworker_stop", block_id: "b1", action_ts: "1700000009.000000" } }),
    );
    expect(press()).not.toEqual(press({ channel: "C2" }));
    // Two people pressing the same button in the same instant are two presses.
    expect(press()).not.toEqual(press({ user: "U2" }));
    expect(press()).not.toEqual(press({ trigger_id: "tr1" }));
  });

  it("gives no key where nothing tells the interaction apart (it is then not deduplicated)", () => {
    expect(commandKeys({})).toEqual([]);
    expect(commandKeys({ trigger_id: "" })).toEqual([]);
    expect(press({ action: { action_id: "coworker_stop" } })).toEqual([]);
  });

  it("fits the store's key limit however long the ids are", () => {
    const long = "x".repeat(10_000);
    const keys = [
      ...commandKeys({ trigger_id: long }),
      ...press({ user: long, channel: long, action: { action_id: long, action_ts: long } }),
    ];
    expect(keys).toHaveLength(2);
    for (const key of keys) expect(`in:${key}`.length).toBeLessThanOrEqual(MAX_KEY_LENGTH);
  });
});
