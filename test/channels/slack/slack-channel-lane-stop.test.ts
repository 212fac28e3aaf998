/**
 * The real SlackChannel (its Bolt app on the fake Slack) gives the lanes' stop to both of a
 * person's stops that are not typed: their Stop button press on a running answer, and their stop
 * of Slack's own stream of it. Either drops what they have waiting in the thread's hand-over lane
 * (a recording being transcribed, the message sent after it) before the turn is stopped, and tells
 * them once — the turn stopped without waiting for that note. slack-lane-stop-press.test.ts proves
 * SlackInteractions does so when given the lanes' stop; this proves the channel gives it (before,
 * neither was wired, and both messages were handed over once the recording was read, starting the
 * turn the person had stopped).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { droppedNote } from "../../../src/channels/shared/hand-over-lanes.js";
import { ACTION_IDS } from "../../../src/channels/slack/slack-blocks.js";
import { gatedTranscription } from "../../support/gated-transcription.js";
import { addRecording, startFileChannel } from "./file-channel.js";
import { actionIds, ev, startFakeSlackWithAnaAndBo } from "./support.js";

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/**
 * A SlackChannel on the fake whose transcriptions wait until `release`, rendering with native
 * streaming on or off. Ana (U1) has started a turn in a thread of #general (its answer running),
 * then sent a recording there (held in transcription) and a message behind it; Bo's message after
 * them, handed over, shows both of hers were taken into her lane (a thread's messages are taken
 * in order).
 */
async function startWithWaitingMessages(nativeStreaming: boolean) {
  const fake = await startFakeSlackWithAnaAndBo();
  cleanup.push(() => fake.close());
  const root = await mkdtemp(join(tmpdir(), "slack-channel-lane-stop-"));
  cleanup.push(() => rm(root, { recursive: true, force: true }));
  const { attachments, transcribing, release, close } = await gatedTranscription(root);
  cleanup.push(close);
  const render = { editIntervalMs: 20, streamIntervalMs: 20, nativeStreaming };
  const { service, channel, texts } = await startFileChannel(fake, root, { attachments, render }, cleanup);
  cleanup.push(async () => release());
  addRecording(fake);
  const bot = `<@${fake.state.botUserId}>`;
  const { ts: thread } = fake.userPosts({ user: "U1", channel: "C1", text: `${bot} hi` });
  await service.waitFor(() => service.received.length === 1);
  const turn = service.output(service.received[0]!.target).beginTurn({ sessionId: "s", turnId: "t" });
  cleanup.push(() => turn.close());
  await turn.handle(ev.text("working"));
  fake.userPosts({ user: "U1", channel: "C1", threadTs: thread, text: `${bot} listen`, files: ["FVOICE"] });
  await transcribing;
  fake.userPosts({ user: "U1", channel: "C1", threadTs: thread, text: `${bot} and summarise it` });
  fake.userPosts({ user: "U2", channel: "C1", threadTs: thread, text: `${bot} are you there?` });
  await service.waitFor(() => service.received.length === 2);
  const dropNotes = () =>
    fake.state
      .botMessages("C1", thread)
      .filter((message) => message.text.startsWith("Your "))
      .map((message) => message.text);
  /** Once the stop was handled: the recording read, the turn and the channel ended. */
  const settle = async () => {
    release();
    await turn.handle(ev.completed("", "interrupted"));
    await turn.close();
    await channel.stop();
  };
  return { fake, service, thread, turn, texts, dropNotes, settle };
}

describe("slack channel: a person's stop that is not typed, with their messages still being read", () => {
  it("their Stop button press drops what they have waiting in the thread's lane, telling them once", async () => {
    const { fake, service, thread, texts, dropNotes, settle } = await startWithWaitingMessages(false);
    const live = await fake.waitFor(
      () => fake.state.botMessages("C1", thread).find((m) => actionIds(m.blocks).includes(ACTION_IDS.stop)),
      "the running answer's Stop button",
    );
    fake.pressButton({ user: "U1", channel: "C1", messageTs: live.ts, actionId: ACTION_IDS.stop });
    // Handled: handed over as a press, or refused with an ephemeral (the press failed).
    await fake.waitFor(
      () => service.presses.length > 0 || fake.state.ephemerals.length > 0,
      "the press handled",
    );
    expect(fake.state.ephemerals.map((ephemeral) => ephemeral.text)).toEqual([]);
    expect(service.presses).toMatchObject([
      { kind: "control", control: "stop", target: { channel: "C1", thread } },
    ]);
    await settle();
    expect(texts()).toEqual(["U1: hi", "U2: are you there?"]);
    expect(dropNotes()).toEqual([droppedNote(2)]);
  });

  it("their stop of Slack's own stream of the answer drops them too, then stops the turn", async () => {
    const { fake, service, thread, turn, texts, dropNotes, settle } = await startWithWaitingMessages(true);
    const stream = await fake.waitFor(
      () => fake.state.botMessages("C1", thread).find((m) => m.streaming),
      "the answer's stream",
    );
    stream.stoppedByUser = true;
    await turn.handle(ev.text(" more"));
    await service.waitFor(() => service.presses.length > 0);
    expect(service.presses).toMatchObject([
      { kind: "control", control: "stop", target: { channel: "C1", thread }, user: { id: "U1" } },
    ]);
    await settle();
    expect(texts()).toEqual(["U1: hi", "U2: are you there?"]);
    expect(dropNotes()).toEqual([droppedNote(2)]);
  });

  it("their stop of Slack's own stream stops the turn before what it dropped is claimed and told", async () => {
    const { fake, service, thread, turn, dropNotes, settle } = await startWithWaitingMessages(true);
    const stream = await fake.waitFor(
      () => fake.state.botMessages("C1", thread).find((m) => m.streaming),
      "the answer's stream",
    );
    // The session layer's record slow: the drops' claims wait until `release`.
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const record = service.firstDelivery.bind(service);
    service.firstDelivery = async (keys) => {
      await held;
      return record(keys);
    };
    stream.stoppedByUser = true;
    await turn.handle(ev.text(" more"));
    // Before, the turn was stopped only once they were claimed and the note posted.
    await service.waitFor(() => service.presses.length > 0);
    expect(dropNotes()).toEqual([]);
    release();
    await settle();
    expect(dropNotes()).toEqual([droppedNote(2)]);
  });
});
