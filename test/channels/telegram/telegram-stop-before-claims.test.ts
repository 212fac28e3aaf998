/**
 * A person's /stop reaches their running turn at once, however slow the session layer's record of
 * deliveries is: it drops what they have waiting in their hand-over lane, stops the turn, and only
 * then waits for the claims of what it dropped (one record write each) to tell them, in one
 * message with the stop's answer. Before, the turn was stopped only once every drop was claimed.
 */
import { afterEach, describe, expect, it } from "vitest";
import { droppedNote } from "../../../src/channels/shared/hand-over-lanes.js";
import { ALICE, ALICE_DM } from "./harness.js";
import { type SlowRecording, startWithSlowRecording, VOICE } from "./slow-recording.js";

let s: SlowRecording | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

describe("telegram: a /stop with the claims of what it dropped held", () => {
  it("stops the turn before they are claimed, then tells the sender with the stop's answer", async () => {
    s = await startWithSlowRecording();
    const { h } = s;
    h.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, voice: VOICE });
    await s.transcribing;
    h.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "and summarise it" });
    // The record answers the /stop's own claim; the drops' claims after it wait until `release`.
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const record = h.service.firstDelivery.bind(h.service);
    let claims = 0;
    h.service.firstDelivery = async (keys) => {
      claims += 1;
      if (claims > 1) await held;
      return record(keys);
    };
    h.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "/stop" });
    await h.service.waitFor(() => h.service.commands.length === 1);
    expect(h.service.commands.map((command) => command.name)).toEqual(["stop"]);
    expect(claims).toBe(3);
    release();
    const told = () => h.tg.state.botMessages(ALICE_DM.id).map((message) => message.text);
    await h.tg.waitFor(() => told().some((text) => text.endsWith(droppedNote(2))));
    expect(told().find((text) => text.endsWith(droppedNote(2)))).toBe(`ran stop\n\n${droppedNote(2)}`);
    expect(h.service.received).toEqual([]);
  });
});
