/**
 * A slow file (a long recording being transcribed) holds only its own sender's later messages in
 * the chat: another member's /stop and message, and the sender's own /stop, reach the session
 * layer at once, while the sender's next message still follows their file. The sender's /stop
 * also drops what they sent before it and is still being read (the recording and the message
 * after it): a stop stops what came before it, instead of that starting a turn after the stop.
 * A /new waiting there is kept: the fresh session the person asked for still starts.
 */
import { afterEach, describe, expect, it } from "vitest";
import { droppedNote } from "../../../src/channels/shared/hand-over-lanes.js";
import { ALICE, ALICE_DM, BOB, OPEN_GROUP } from "./harness.js";
import { type SlowRecording, startWithSlowRecording, VOICE } from "./slow-recording.js";

let s: SlowRecording | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

describe("telegram: a slow file", () => {
  it("holds neither another member's /stop and message nor its sender's /stop, which drops what the sender sent before it", async () => {
    s = await startWithSlowRecording();
    const { h: harness, transcribing, release } = s;
    harness.tg.sendUserMessage({
      chat: OPEN_GROUP,
      from: ALICE,
      voice: VOICE,
      caption: "@coworker_bot",
    });
    await transcribing;
    harness.tg.sendUserMessage({ chat: OPEN_GROUP, from: ALICE, text: "@coworker_bot and summarise it" });
    harness.tg.sendUserMessage({ chat: OPEN_GROUP, from: BOB, text: "/stop" });
    harness.tg.sendUserMessage({ chat: OPEN_GROUP, from: BOB, text: "@coworker_bot are you there?" });
    harness.tg.sendUserMessage({ chat: OPEN_GROUP, from: ALICE, text: "/stop" });
    await harness.service.waitFor(
      () =>
        harness.service.commands.length === 2 &&
        harness.service.received.some((message) => message.text === "are you there?"),
    );
    expect(harness.service.commands.map((command) => [command.name, command.user.name])).toEqual([
      ["stop", "@bob"],
      ["stop", "@alice"],
    ]);
    // Alice's own next message waited for her recording; her /stop dropped both, and she is told.
    expect(harness.service.received.map((message) => message.text)).toEqual(["are you there?"]);
    await harness.tg.waitFor(() =>
      harness.tg.state.botMessages(OPEN_GROUP.id).some((message) => message.text.endsWith(droppedNote(2))),
    );
    release();
    // Her message after the stop follows the dropped ones in her lane, and is the one handed over.
    harness.tg.sendUserMessage({ chat: OPEN_GROUP, from: ALICE, text: "@coworker_bot start over" });
    await harness.service.waitFor(() => harness.service.received.length === 2);
    expect(harness.service.received.map((message) => message.text)).toEqual(["are you there?", "start over"]);
  });
});

describe("telegram: a stop after a waiting /new", () => {
  it("drops the message still being read but keeps the /new, which still starts a fresh session", async () => {
    s = await startWithSlowRecording();
    const { h: harness, transcribing, release } = s;
    harness.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, voice: VOICE });
    await transcribing;
    harness.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "/new" });
    harness.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "/stop" });
    const told = () => harness.tg.state.botMessages(ALICE_DM.id).map((message) => message.text);
    await harness.tg.waitFor(() => told().some((text) => text.includes("dropped")));
    expect(harness.service.commands.map((command) => command.name)).toEqual(["stop"]);
    // Only the recording was dropped: the /new the person typed is a setting a stop does not undo.
    expect(
      told()
        .find((text) => text.includes("dropped"))
        ?.endsWith(droppedNote(1)),
    ).toBe(true);
    release();
    await harness.service.waitFor(() => harness.service.commands.length === 2);
    expect(harness.service.commands.map((command) => command.name)).toEqual(["stop", "new"]);
    expect(harness.service.received).toHaveLength(0);
  });
});
