/**
 * An album that finds its sender's hand-over lane full is refused aloud, as any other message is:
 * once the album has closed (its items gathered), the person is told it was not taken, instead of
 * it vanishing with only a log line.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { LANE_FULL, LANE_MAX_WAITING } from "../../../src/channels/shared/hand-over-lanes.js";
import { manualClock } from "../../support/manual-clock.js";
import { ALICE, ALICE_DM } from "./harness.js";
import { type SlowRecording, startWithSlowRecording, VOICE } from "./slow-recording.js";

const PNG = join(import.meta.dirname, "../../fixtures/attachments/red-4x3.png");

let s: SlowRecording | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

describe("telegram: an album and a full lane", () => {
  it("is refused with the lane-full reply once it has closed", async () => {
    const albums = manualClock();
    s = await startWithSlowRecording({ clock: albums });
    const { h } = s;
    const refusals = () => h.tg.state.botMessages(ALICE.id).filter((m) => m.text === LANE_FULL).length;
    h.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, voice: VOICE });
    await s.transcribing;
    for (let i = 1; i < LANE_MAX_WAITING; i++)
      h.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: `m${i}` });
    h.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "one too many" });
    await h.tg.waitFor(() => refusals() === 1);
    const png = await readFile(PNG);
    h.tg.sendUserMessage({
      chat: ALICE_DM,
      from: ALICE,
      photo: { content: png },
      mediaGroupId: "alb",
      caption: "look",
    });
    h.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, photo: { content: png }, mediaGroupId: "alb" });
    await h.tg.waitFor(() =>
      h.logs().some((line) => line.msg === "telegram: hand-over lane full, album refused"),
    );
    expect(refusals()).toBe(1);
    albums.fire();
    await h.tg.waitFor(() => refusals() === 2);
    s.release();
    await h.service.waitFor(() => h.service.received.length === LANE_MAX_WAITING);
    expect(h.service.received.some((message) => message.text.includes("look"))).toBe(false);
  });
});
