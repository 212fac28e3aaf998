/**
 * A slow file in a Slack thread (a recording being transcribed) holds only its own sender's later
 * messages there: another person's message and "stop", and the sender's own "stop", reach the
 * session layer at once, while the sender's next message still follows their file. The sender's
 * "stop" also drops what they sent before it and is still being read (the recording and the
 * message after it), telling them: a stop stops what came before it. Their "new" sent after a
 * file waits for it, so the file lands in the session it was sent to, and a later "stop" keeps it.
 * The channel stopping waits for a slow file only so long, then drops it and what waits behind it,
 * telling the sender in the thread to send each again (Slack acknowledged them long before); a
 * note Slack refuses is logged as not told.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino, { type Logger } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import {
  droppedNote,
  type LaneStopOptions,
  STOPPED_NOTE,
} from "../../../src/channels/shared/hand-over-lanes.js";
import { gatedTranscription } from "../../support/gated-transcription.js";
import { manualClock } from "../../support/manual-clock.js";
import { addRecording, startFileChannel } from "./file-channel.js";
import { startFakeSlackWithAnaAndBo } from "./support.js";

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** A Slack channel on the fake whose transcriptions wait until `release`. */
async function startWithSlowRecording(laneStop?: LaneStopOptions, logger?: Logger) {
  const fake = await startFakeSlackWithAnaAndBo();
  cleanup.push(() => fake.close());
  const root = await mkdtemp(join(tmpdir(), "slack-slow-"));
  cleanup.push(() => rm(root, { recursive: true, force: true }));
  const { attachments, transcribing, release, close } = await gatedTranscription(root);
  cleanup.push(close);
  const setup = { ...(laneStop ? { laneStop } : {}), attachments, ...(logger ? { logger } : {}) };
  const { service, channel, texts } = await startFileChannel(fake, root, setup, cleanup);
  cleanup.push(async () => release());
  addRecording(fake);
  return { fake, service, channel, bot: `<@${fake.state.botUserId}>`, transcribing, release, texts };
}

describe("slack: a slow file", () => {
  it("holds neither another person's message and stop nor its sender's stop, which drops what the sender sent before it", async () => {
    const { fake, service, bot, transcribing, release, texts } = await startWithSlowRecording();
    const { ts } = fake.userPosts({ user: "U1", channel: "C1", text: `${bot} listen`, files: ["FVOICE"] });
    await transcribing;
    fake.userPosts({ user: "U1", channel: "C1", threadTs: ts, text: `${bot} and summarise it` });
    fake.userPosts({ user: "U2", channel: "C1", threadTs: ts, text: `${bot} stop` });
    fake.userPosts({ user: "U2", channel: "C1", threadTs: ts, text: `${bot} are you there?` });
    fake.userPosts({ user: "U1", channel: "C1", threadTs: ts, text: `${bot} stop` });
    await service.waitFor(() => service.received.length === 3);
    expect(texts()).toEqual(["U2: stop", "U2: are you there?", "U1: stop"]);
    // U1's stop dropped the recording and the message after it (before, both were handed over
    // after the stop and started a turn); U1 is told.
    await fake.waitFor(() => fake.state.messages.some((message) => message.text === droppedNote(2)));
    release();
    // U1's message after the stop follows the dropped ones in their lane, and is handed over.
    fake.userPosts({ user: "U1", channel: "C1", threadTs: ts, text: `${bot} start over` });
    await service.waitFor(() => service.received.length === 4);
    expect(texts().slice(3)).toEqual(["U1: start over"]);
  });

  it("holds its sender's 'new' until the file is handed over; 'status' is answered at once", async () => {
    const { fake, service, bot, transcribing, release, texts } = await startWithSlowRecording();
    const { ts } = fake.userPosts({ user: "U1", channel: "C1", text: `${bot} listen`, files: ["FVOICE"] });
    await transcribing;
    fake.userPosts({ user: "U1", channel: "C1", threadTs: ts, text: `${bot} new` });
    fake.userPosts({ user: "U1", channel: "C1", threadTs: ts, text: `${bot} status` });
    // The thread's order handles "new" before "status": once "status" is in, "new" was seen.
    await service.waitFor(() => service.received.length === 1);
    expect(texts()).toEqual(["U1: status"]);
    release();
    await service.waitFor(() => service.received.length === 3);
    expect(texts()).toEqual(["U1: status", "U1: listen", "U1: new"]);
  });

  it("is waited for by stop only until the deadline (on the injected clock), then dropped, its sender told in the thread", async () => {
    const clock = manualClock();
    const { fake, service, channel, bot, transcribing, texts } = await startWithSlowRecording({
      withinMs: 5000,
      clock,
    });
    const { ts } = fake.userPosts({ user: "U1", channel: "C1", text: `${bot} listen`, files: ["FVOICE"] });
    await transcribing;
    fake.userPosts({ user: "U1", channel: "C1", threadTs: ts, text: `${bot} and summarise it` });
    // Handed over at once, after the thread's earlier messages: the one before waits in the lane.
    fake.userPosts({ user: "U1", channel: "C1", threadTs: ts, text: `${bot} status` });
    await service.waitFor(() => service.received.length === 1);
    const stopping = channel.stop();
    await fake.waitFor(() => clock.pending(5000) === 1, "the stop's deadline set");
    clock.fire(5000);
    // Before, stop waited for the transcription, however long (the shutdown's watchdog ended the
    // process before running turns got their grace).
    await stopping;
    expect(texts()).toEqual(["U1: status"]);
    // Slack acknowledged both long before: no other process gets them. Before, nobody was told.
    expect(fake.state.botMessages("C1", ts).filter((message) => message.text === STOPPED_NOTE)).toHaveLength(
      2,
    );
  });

  it("counts a note Slack refused at the stop as not told", async () => {
    const clock = manualClock();
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const { fake, channel, bot, transcribing } = await startWithSlowRecording(
      { withinMs: 5000, clock },
      logger,
    );
    fake.userPosts({ user: "U1", channel: "C1", text: `${bot} listen`, files: ["FVOICE"] });
    await transcribing;
    fake.state.fail("chat.postMessage", "channel_not_found");
    const stopping = channel.stop();
    await fake.waitFor(() => clock.pending(5000) === 1, "the stop's deadline set");
    clock.fire(5000);
    await stopping;
    // Before, the refused post was logged as a file-notes failure and the sender counted as told.
    expect(lines.find((line) => String(line.msg).startsWith("stopped with messages"))).toMatchObject({
      dropped: 1,
      told: 0,
      allTold: false,
    });
    expect(lines.some((line) => line.msg === "a dropped message's sender could not be told")).toBe(true);
  });
});

describe("slack: a stop after a waiting 'new'", () => {
  it("drops the message still being read but keeps the 'new', which is still handed over", async () => {
    const { fake, service, bot, transcribing, release, texts } = await startWithSlowRecording();
    const { ts } = fake.userPosts({ user: "U1", channel: "C1", text: `${bot} listen`, files: ["FVOICE"] });
    await transcribing;
    fake.userPosts({ user: "U1", channel: "C1", threadTs: ts, text: `${bot} new` });
    fake.userPosts({ user: "U1", channel: "C1", threadTs: ts, text: `${bot} stop` });
    await fake.waitFor(() => fake.state.messages.some((message) => message.text.includes("dropped")));
    expect(
      fake.state.messages.filter((message) => message.text.includes("dropped")).map((m) => m.text),
    ).toEqual([droppedNote(1)]);
    release();
    await service.waitFor(() => service.received.length === 2);
    expect(texts()).toEqual(["U1: stop", "U1: new"]);
  });
});
