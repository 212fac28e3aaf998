/**
 * A person's own command never overtakes what they sent before it: while their voice note is
 * still being transcribed, their /new waits behind it (the note lands in the session it was sent
 * to), a read-only /status is answered at once, and their /stop is answered at once and drops
 * the voice note (they are told) instead of letting it start a turn after the stop.
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

describe("telegram: a person's command and their own earlier message", () => {
  it("/new waits for the voice note sent before it; /status is answered at once", async () => {
    s = await startWithSlowRecording();
    const { h } = s;
    let commandsBeforeVoiceNote = -1;
    h.service.onReceive = () => {
      commandsBeforeVoiceNote = h.service.commands.length;
    };
    h.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, voice: VOICE });
    await s.transcribing;
    h.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "/new" });
    h.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "/status" });
    // The chat's order handles /new before /status: once /status is answered, /new was seen.
    await h.service.waitFor(() => h.service.commands.length >= 1);
    expect(h.service.commands.map((command) => command.name)).toEqual(["status"]);
    s.release();
    await h.service.waitFor(() => h.service.commands.length === 2);
    expect(h.service.received.map((message) => message.text)).toEqual([
      "[voice transcript, 0:03]\nthe recording",
    ]);
    // The voice note was recorded while only /status had run: before /new.
    expect(commandsBeforeVoiceNote).toBe(1);
    expect(h.service.commands.map((command) => command.name)).toEqual(["status", "new"]);
  });

  it("/stop is answered at once and drops the voice note still being read, telling the person", async () => {
    s = await startWithSlowRecording();
    const { h } = s;
    h.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, voice: VOICE });
    await s.transcribing;
    h.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "/stop" });
    await h.service.waitFor(() => h.service.commands.length === 1);
    expect(h.service.commands[0]!.name).toBe("stop");
    await h.tg.waitFor(() =>
      h.tg.state.botMessages(ALICE.id).some((message) => message.text === `ran stop\n\n${droppedNote(1)}`),
    );
    s.release();
    // Her next message follows the dropped one in her lane: when it arrives, the voice note never did.
    h.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "hello again" });
    await h.service.waitFor(() => h.service.received.length === 1);
    expect(h.service.received.map((message) => message.text)).toEqual(["hello again"]);
  });
});
