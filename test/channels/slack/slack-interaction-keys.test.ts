import { describe, expect, it } from "vitest";
import { MAX_KEY_LENGTH } from "../../../src/store/keyv-space.js";
import { commandKey, pressKey } from "../../../src/channels/slack/slack-interaction-keys.js";

const press = (overrides: Partial<Parameters<typeof pressKey>[0]> = {}) =>
  pressKey({
    user: "U1",
    channel: "C1",
    messageTs: "1700000000.000100",
    action: { action_id: "coworker_stop", block_id: "b1", action_ts: "1700000001.000200" },
    ...overrides,
  });

/** A press carrying neither trigger_id nor action_ts. */
const bare = (overrides: Partial<Parameters<typeof pressKey>[0]> = {}) =>
  press({ action: { action_id: "coworker_card_approve", block_id: "b1", value: "p1" }, ...overrides });

describe("slack interaction keys", () => {
  it("knows a slash command and a press by their trigger id, the same key for both kinds", () => {
    expect(commandKey({ trigger_id: "13345224609.738474920.8088930838d88f008e0" })).toBeDefined();
    expect(commandKey({ trigger_id: "tr1" })).toEqual(press({ trigger_id: "tr1" }));
    expect(commandKey({ trigger_id: "tr1" })).not.toEqual(commandKey({ trigger_id: "tr2" }));
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

  it("knows a press without trigger_id and action_ts by who pressed which button on which message", () => {
    expect(bare()).toEqual(bare());
    expect(bare()).not.toEqual(bare({ user: "U2" }));
    expect(bare()).not.toEqual(bare({ channel: "C2" }));
    expect(bare()).not.toEqual(bare({ messageTs: "1700000000.000200" }));
    expect(bare()).not.toEqual(
      bare({ action: { action_id: "coworker_card_deny", block_id: "b1", value: "p1" } }),
    );
    expect(bare()).not.toEqual(
      bare({ action: { action_id: "coworker_card_approve", block_id: "b1", value: "p2" } }),
    );
    expect(bare()).not.toEqual(
      press({ action: { action_id: "coworker_card_approve", block_id: "b1", value: "p1", action_ts: "1" } }),
    );
  });

  it("gives a slash command without a trigger id no key (the caller refuses it)", () => {
    expect(commandKey({})).toBeUndefined();
    expect(commandKey({ trigger_id: "" })).toBeUndefined();
  });

  it("fits the store's key limit however long the ids are", () => {
    const long = "x".repeat(10_000);
    const keys = [
      commandKey({ trigger_id: long }),
      press({ user: long, channel: long, action: { action_id: long, action_ts: long } }),
      bare({ user: long, action: { action_id: long, value: long } }),
    ];
    for (const key of keys) expect(`in:${key}`.length).toBeLessThanOrEqual(MAX_KEY_LENGTH);
  });
});
