/**
 * Stopping the channel (the shutdown's stop-intake step, before running turns get their grace)
 * waits for messages whose files are still being read only until its deadline: a transcription can
 * take minutes, and the shutdown's watchdog would end the process first. What is left then is
 * dropped, never handed over, and logged — and, since polling confirmed those updates long before
 * (Telegram never sends them again, to this process or another), each one's sender is told in its
 * chat to send it again — once for an album, however many items it has. In webhook mode an update
 * the stop cut unanswered comes again from Telegram: its sender is not told (their resend would be
 * a second turn); one answered at the webhook's deadline is not, so its sender is told. The
 * deadlines and the album's window run on the channel's one injected clock here.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { STOPPED_NOTE } from "../../../src/channels/shared/hand-over-lanes.js";
import { manualClock } from "../../support/manual-clock.js";
import { ALICE, ALICE_DM, TEST_WEBHOOK } from "./harness.js";
import { postToWebhook } from "./post-to-webhook.js";
import { type SlowRecording, startWithSlowRecording, VOICE } from "./slow-recording.js";

const PNG = join(import.meta.dirname, "../../fixtures/attachments/red-4x3.png");

let s: SlowRecording | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const DROPPED_LOG =
  "stopped with messages still being read: not handed over, their senders told to send them again unless redelivered";

describe("telegram: stopping with a message still being read", () => {
  it("waits for it until the deadline, then drops it and what waits behind it, telling the sender of each", async () => {
    const clock = manualClock();
    s = await startWithSlowRecording({ clock, laneStop: { withinMs: 5000 } });
    const { h } = s;
    h.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, voice: VOICE });
    await s.transcribing;
    h.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "and summarise it" });
    h.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "/new" });
    // Answered at once, after the chat's earlier updates: those wait in Alice's lane by then.
    h.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "/status" });
    await h.service.waitFor(() => h.service.commands.length === 1);
    let stopped = false;
    const stopping = h.channel.stop().then(() => {
      stopped = true;
    });
    await h.tg.waitFor(() => clock.pending(5000) === 1);
    expect(stopped).toBe(false);
    clock.fire(5000);
    await stopping;
    // Before, the three were dropped with only a log line: Alice never heard of them again.
    expect(
      h.tg.state
        .botMessages(ALICE.id)
        .map((message) => message.text)
        .filter((text) => text === STOPPED_NOTE),
    ).toHaveLength(3);
    expect(h.logs().find((line) => line.msg === DROPPED_LOG)).toMatchObject({ dropped: 3, told: 3 });
    s.release();
    await h.tg.waitFor(() => h.logs().some((line) => line.msg === "telegram: hand-over cancelled"));
    expect(h.service.received).toHaveLength(0);
    expect(h.service.commands.map((command) => command.name)).toEqual(["status"]);
  });

  it("tells the sender of an album waiting behind the file once, as for a message", async () => {
    const clock = manualClock();
    s = await startWithSlowRecording({ clock, laneStop: { withinMs: 5000 } });
    const { h } = s;
    h.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, voice: VOICE });
    await s.transcribing;
    const png = await readFile(PNG);
    const photo = { chat: ALICE_DM, from: ALICE, photo: { content: png }, mediaGroupId: "alb" } as const;
    h.tg.sendUserMessage({ ...photo, caption: "look" });
    h.tg.sendUserMessage(photo);
    h.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "/status" });
    await h.service.waitFor(() => h.service.commands.length === 1);
    clock.fire(); // the album closes, waiting behind the recording
    const stopping = h.channel.stop();
    await h.tg.waitFor(() => clock.pending(5000) === 1);
    clock.fire(5000);
    await stopping;
    const notes = h.tg.state.botMessages(ALICE.id).filter((message) => message.text === STOPPED_NOTE);
    expect(notes).toHaveLength(2);
    expect(h.logs().find((line) => line.msg === DROPPED_LOG)).toMatchObject({ dropped: 2, told: 2 });
    s.release();
    await h.tg.waitFor(() => h.logs().some((line) => line.msg === "telegram: hand-over cancelled"));
    expect(h.service.received).toHaveLength(0);
  });

  it("webhook: does not tell the sender of an update the stop left unanswered, which Telegram sends again", async () => {
    const clock = manualClock();
    s = await startWithSlowRecording({ webhook: TEST_WEBHOOK, clock, laneStop: { withinMs: 5000 } });
    const { h } = s;
    const { update } = h.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, voice: VOICE });
    const answer = postToWebhook(h.channel.webhookPort(), update);
    await s.transcribing;
    const stopping = h.channel.stop();
    await h.tg.waitFor(() => clock.pending(5000) === 1);
    clock.fire(5000);
    await stopping;
    // Telegram got no 200, so it delivers the update again: a note too would make two turns of it.
    expect(await answer).toBe("no answer");
    expect(h.tg.state.botMessages(ALICE.id).map((message) => message.text)).not.toContain(STOPPED_NOTE);
    expect(h.logs().find((line) => line.msg === DROPPED_LOG)).toMatchObject({
      dropped: 1,
      redelivered: 1,
      told: 0,
      allTold: true,
    });
    expect(h.service.received).toHaveLength(0);
  });

  it("webhook: tells the sender of an update answered at the webhook's deadline, which Telegram never sends again", async () => {
    const clock = manualClock();
    s = await startWithSlowRecording({
      webhook: { ...TEST_WEBHOOK, answerWithinMs: 1 },
      clock,
      laneStop: { withinMs: 5000 },
    });
    const { h } = s;
    const { update } = h.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, voice: VOICE });
    const answer = postToWebhook(h.channel.webhookPort(), update);
    await s.transcribing;
    // The recording waits on its gate: only the deadline can have answered.
    expect(await answer).toBe("status 200");
    const stopping = h.channel.stop();
    await h.tg.waitFor(() => clock.pending(5000) === 1);
    clock.fire(5000);
    await stopping;
    expect(h.tg.state.botMessages(ALICE.id).map((message) => message.text)).toContain(STOPPED_NOTE);
    expect(h.logs().find((line) => line.msg === DROPPED_LOG)).toMatchObject({
      dropped: 1,
      redelivered: 0,
      told: 1,
      allTold: true,
    });
  });
});
