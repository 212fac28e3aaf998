/**
 * Stopping the channel (the shutdown's stop-intake step, before running turns get their grace)
 * waits for messages whose files are still being read only until its deadline: a transcription can
 * take minutes, and the shutdown's watchdog would end the process first. What is left then is
 * dropped, never handed over, and logged. The deadline runs on an injected clock here.
 */
import { afterEach, describe, expect, it } from "vitest";
import { manualClock } from "../../support/manual-clock.js";
import { ALICE, ALICE_DM } from "./harness.js";
import { type SlowRecording, startWithSlowRecording, VOICE } from "./slow-recording.js";

let s: SlowRecording | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

describe("telegram: stopping with a message still being read", () => {
  it("waits for it until the deadline, then drops it and logs so", async () => {
    const clock = manualClock();
    s = await startWithSlowRecording({ laneStop: { withinMs: 5000, clock } });
    const { h } = s;
    h.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, voice: VOICE });
    await s.transcribing;
    let stopped = false;
    const stopping = h.channel.stop().then(() => {
      stopped = true;
    });
    await h.tg.waitFor(() => clock.pending() === 1);
    expect(stopped).toBe(false);
    clock.fire();
    await stopping;
    expect(
      h.logs().find((line) => line.msg === "stopped with messages still being read: not handed over"),
    ).toMatchObject({ dropped: 1 });
    s.release();
    await h.tg.waitFor(() => h.logs().some((line) => line.msg === "telegram: hand-over cancelled"));
    expect(h.service.received).toHaveLength(0);
  });
});
