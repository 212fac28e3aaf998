/**
 * Webhook mode answers Telegram only once the update's message is handed over (recorded by the
 * session layer): Telegram never re-sends an update it got a 200 for, so a 200 while the message
 * still waited in its sender's lane would lose it to a crash. A message still being read when the
 * webhook's deadline (answerWithinMs) comes is acknowledged then, as before, and still recorded.
 * An album comes as one update per item: every item's answer waits for the album's hand-over.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { manualClock } from "../../support/manual-clock.js";
import { ALICE, ALICE_DM, TEST_WEBHOOK, WEBHOOK_SECRET } from "./harness.js";
import { type SlowRecording, startWithSlowRecording, VOICE } from "./slow-recording.js";

const PNG = join(import.meta.dirname, "../../fixtures/attachments/red-4x3.png");

let s: SlowRecording | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

function post(port: number | undefined, update: unknown): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}/tg/hook`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": WEBHOOK_SECRET },
    body: JSON.stringify(update),
  });
}

describe("telegram webhook: the answer follows the hand-over", () => {
  it("answers a text message only after the session layer recorded it", async () => {
    s = await startWithSlowRecording({ webhook: TEST_WEBHOOK });
    const { h } = s;
    const events: string[] = [];
    h.service.onReceive = () => {
      events.push("recorded");
    };
    const { update } = h.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "remember this" });
    const answer = await post(h.channel.webhookPort(), update);
    events.push(`answered ${answer.status}`);
    expect(events).toEqual(["recorded", "answered 200"]);
  });

  it("holds the answer for a voice note being transcribed until the webhook's deadline", async () => {
    s = await startWithSlowRecording({ webhook: { ...TEST_WEBHOOK, answerWithinMs: 300 } });
    const { h } = s;
    const { update } = h.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, voice: VOICE });
    const answering = post(h.channel.webhookPort(), update);
    await s.transcribing;
    // The transcription waits until released below: only the deadline can answer meanwhile.
    const answer = await answering;
    expect(answer.status).toBe(200);
    expect(h.logs().some((line) => line.msg === "telegram webhook update still running, acknowledged")).toBe(
      true,
    );
    expect(h.service.received).toHaveLength(0);
    s.release();
    await h.service.waitFor(() => h.service.received.length === 1);
  });

  it("answers every item of an album only after the album was recorded", async () => {
    const clock = manualClock();
    s = await startWithSlowRecording({ webhook: TEST_WEBHOOK, clock });
    const { h } = s;
    const events: string[] = [];
    h.service.onReceive = () => {
      events.push("recorded");
    };
    const photo = { content: await readFile(PNG) };
    const items = [
      h.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, photo, mediaGroupId: "alb", caption: "look" }),
      h.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, photo, mediaGroupId: "alb" }),
    ];
    const answers = items.map(async ({ update }, index) => {
      const answer = await post(h.channel.webhookPort(), update);
      events.push(`item ${index + 1} answered ${answer.status}`);
    });
    // The first item sets the album's longest wait and a quiet time, the second another quiet time.
    await h.tg.waitFor(() => clock.setCount() === 3);
    clock.fire();
    await Promise.all(answers);
    expect(events[0]).toBe("recorded");
    expect(events.slice(1).sort()).toEqual(["item 1 answered 200", "item 2 answered 200"]);
    expect(h.service.received).toHaveLength(1);
  });
});
