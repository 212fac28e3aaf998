/**
 * The Stop button on a running answer and `/coworker stop` stop more than the turn: what their
 * person still has waiting in the thread's hand-over lane (a recording being transcribed, the
 * message sent after it) is dropped, as their typed stop drops it, and they are told once — before,
 * both were handed over once the recording was read, and started the turn the person had stopped.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { droppedNote } from "../../../src/channels/shared/hand-over-lanes.js";
import { SlackInteractions } from "../../../src/channels/slack/slack-interactions.js";
import { gatedTranscription } from "../../support/gated-transcription.js";
import { addRecording } from "./file-channel.js";
import { anaStopPress } from "./stop-press.js";
import { mention, startInbound } from "./inbound-on-fake.js";
import { silentLogger } from "./support.js";

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/**
 * SlackInbound and SlackInteractions on the fake Slack, the Stop press and slash command reaching
 * the inbound's lanes; Ana (U1) has sent a recording (held in transcription until `release`) in a
 * thread, then a message behind it.
 */
async function startWithWaitingMessages() {
  const root = await mkdtemp(join(tmpdir(), "slack-stop-press-"));
  cleanup.push(() => rm(root, { recursive: true, force: true }));
  const { attachments, transcribing, release, close } = await gatedTranscription(root);
  cleanup.push(close);
  const started = await startInbound(cleanup, { root, attachments });
  cleanup.push(async () => release());
  const { fake, inbound, service } = started;
  addRecording(fake);
  const interactions = new SlackInteractions({
    bot: { userId: fake.state.botUserId, botId: fake.state.botId, teamId: fake.state.teamId },
    service,
    clients: started.clients,
    latest: { latest: async () => thread },
    users: started.users,
    access: started.access,
    logger: silentLogger,
    stopLane: (target, userId) => inbound.stopLane(target, userId),
  });
  const thread = fake.state.nextTs();
  const recording = mention(fake, "U1", thread, "listen", thread);
  const files = [
    {
      id: "FVOICE",
      name: "voice.ogg",
      mimetype: "audio/ogg",
      url_private_download: `${fake.apiUrl.replace(/\/api\/$/, "")}/files/FVOICE/download/voice.ogg`,
    },
  ];
  await inbound.handle({ ...recording.event, files }, recording.envelope);
  await transcribing;
  const after = mention(fake, "U1", thread, "and summarise it");
  await inbound.handle(after.event, after.envelope);
  const dropNotes = () => fake.state.messages.filter((message) => message.text.startsWith("Your "));
  return { ...started, interactions, thread, release, dropNotes };
}

describe("slack: a Stop press or /coworker stop with messages still being read", () => {
  it("the requester's Stop press drops what they have waiting in the thread's lane, telling them once", async () => {
    const { fake, inbound, service, interactions, thread, release, dropNotes } =
      await startWithWaitingMessages();
    await interactions.press(anaStopPress(fake, thread));
    expect(service.presses.map((press) => press.kind === "control" && press.control)).toEqual(["stop"]);
    release();
    await inbound.stop();
    expect(service.received).toEqual([]);
    expect(dropNotes().map((message) => message.text)).toEqual([droppedNote(2)]);
  });

  it("/coworker stop for the thread drops them too", async () => {
    const { fake, inbound, service, interactions, release, dropNotes } = await startWithWaitingMessages();
    const replies: string[] = [];
    await interactions.command(
      { user_id: "U1", team_id: fake.state.teamId, channel_id: "C1", text: "stop", trigger_id: "T-slash" },
      async (reply) => void replies.push(reply.text),
    );
    expect(service.commands).toHaveLength(1);
    release();
    await inbound.stop();
    expect(service.received).toEqual([]);
    expect(dropNotes().map((message) => message.text)).toEqual([droppedNote(2)]);
  });
});
