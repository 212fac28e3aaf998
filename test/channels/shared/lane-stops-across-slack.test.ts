/**
 * A person's stop reaches the file they sent before it in another process: two Slack channels
 * (two processes' Socket Mode connections, A and B, on one fake Slack), each with its own
 * coordination on one real redis-server. Ana's recording is still being transcribed in A when her
 * "stop" in the thread goes to B: B hands the stop over, A never hands the recording over (before,
 * it did, after the stop, starting a turn) and tells her in the thread that one message was
 * dropped; her next message to A is handed over as usual. A message she sent before her stop
 * that reaches A only after B announced it (a lagging delivery) is dropped there too, she is told
 * so, and what she sends after the stop goes through.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { AttachmentIntake } from "../../../src/attachments/inbound-attachments.js";
import { droppedNote } from "../../../src/channels/shared/hand-over-lanes.js";
import { laneStopChannel } from "../../../src/channels/shared/lane-stop-broadcast.js";
import type { Coordination } from "../../../src/store/coordination/coordination.js";
import type { FakeSlack } from "../../fakes/fake-slack/index.js";
import { addRecording, startFileChannel } from "../slack/file-channel.js";
import { startFakeSlackWithAnaAndBo } from "../slack/support.js";
import { processesOnOneRedis } from "./support-lane-stops.js";

describe("slack: a stop taken by another process", () => {
  const processes = processesOnOneRedis();
  const { cleanup } = processes;

  /** One process's Slack channel on `fake` (its connection labelled `label`), sharing the redis-server. */
  const processOn = async (
    fake: FakeSlack,
    label: string,
    root: string,
    attachments?: AttachmentIntake,
    laneStops?: Coordination,
  ) => {
    laneStops ??= await processes.coordination();
    const setup = { apiUrl: fake.apiUrlFor(label), laneStops, ...(attachments ? { attachments } : {}) };
    return startFileChannel(fake, root, setup, cleanup);
  };

  it("drops the recording A is still reading when B takes her stop, and A tells her so in the thread", async () => {
    const fake = await startFakeSlackWithAnaAndBo();
    cleanup.push(() => fake.close());
    const { root, attachments, transcribing, release } = await processes.gatedWorkspace("slack-lane-stops-");
    const a = await processOn(fake, "A", root, attachments);
    cleanup.push(async () => release());
    const b = await processOn(fake, "B", root);
    addRecording(fake);
    const bot = `<@${fake.state.botUserId}>`;

    const { ts } = fake.userPosts({
      user: "U1",
      channel: "C1",
      text: `${bot} listen`,
      files: ["FVOICE"],
      to: "A",
    });
    await transcribing;
    fake.userPosts({ user: "U1", channel: "C1", threadTs: ts, text: `${bot} stop`, to: "B" });
    await b.service.waitFor(() => b.service.received.length === 1);
    await fake.waitFor(() => fake.state.messages.some((message) => message.text === droppedNote(1)));
    release();
    // Her next message to A waits in her lane behind the recording's job: once it is in, that job is over.
    fake.userPosts({ user: "U1", channel: "C1", threadTs: ts, text: `${bot} start over`, to: "A" });
    await a.service.waitFor(() => a.service.received.length === 1);

    expect(b.texts()).toEqual(["U1: stop"]);
    expect(a.texts()).toEqual(["U1: start over"]);
    const notes = fake.state.messages.filter((message) => message.text.includes("dropped"));
    expect(notes.map((message) => [message.text, message.threadTs])).toEqual([[droppedNote(1), ts]]);
  });

  it("drops in A a message she sent before her stop that reaches A after B announced it, and tells her so", async () => {
    const fake = await startFakeSlackWithAnaAndBo();
    cleanup.push(() => fake.close());
    const root = await mkdtemp(join(os.tmpdir(), "slack-lane-stops-late-"));
    cleanup.push(() => rm(root, { recursive: true, force: true }));
    const onA = await processes.coordination();
    const a = await processOn(fake, "A", root, undefined, onA);
    const b = await processOn(fake, "B", root);
    const bot = `<@${fake.state.botUserId}>`;
    const { ts: thread } = fake.userPosts({ user: "U1", channel: "C1", text: `${bot} hello`, to: "B" });
    await b.service.waitFor(() => b.service.received.length === 1);
    // Her message is sent (its ts taken) before her stop, but reaches A only after the announcement.
    const lateTs = fake.state.nextTs();
    // Heard on A's own connection: once this listener has the announcement, A's lanes had it.
    let heard!: () => void;
    const announced = new Promise<void>((resolve) => {
      heard = resolve;
    });
    const unsubscribe = await onA.subscribe(laneStopChannel("slack"), () => heard());
    cleanup.push(unsubscribe);

    fake.userPosts({ user: "U1", channel: "C1", threadTs: thread, text: `${bot} stop`, to: "B" });
    await announced;
    fake.sendEvent(
      {
        type: "message",
        channel_type: "channel",
        user: "U1",
        text: `${bot} sent before the stop`,
        ts: lateTs,
        event_ts: lateTs,
        channel: "C1",
        thread_ts: thread,
        team: fake.state.teamId,
      },
      { to: "A" },
    );
    await fake.waitFor(() => fake.state.messages.some((message) => message.text === droppedNote(1)));
    fake.userPosts({ user: "U1", channel: "C1", threadTs: thread, text: `${bot} after the stop`, to: "A" });
    await a.service.waitFor(() => a.service.received.length === 1);

    expect(a.texts()).toEqual(["U1: after the stop"]);
    expect(b.texts()).toEqual(["U1: hello", "U1: stop"]);
    const notes = fake.state.messages.filter((message) => message.text.includes("dropped"));
    expect(notes.map((message) => [message.text, message.threadTs])).toEqual([[droppedNote(1), thread]]);
  });
});
