/**
 * A person's stop reaches the file they sent before it in another process: two Slack channels
 * (two processes' Socket Mode connections, A and B, on one fake Slack), each with its own
 * coordination on one real redis-server. Ana's recording is still being transcribed in A when her
 * "stop" in the thread goes to B: B hands the stop over, A never hands the recording over (before,
 * it did, after the stop, starting a turn) and tells her in the thread that one message was
 * dropped; her next message to A is handed over as usual. A message she sent before her stop
 * that reaches A only after B announced it (a lagging delivery) is dropped there too, she is told
 * so, and what she sends after the stop goes through. She is told once per message, and only of
 * one never handed over: a post's two events (message and app_mention twins) read in A and B and
 * both dropped by her stop are told once, and Slack's retry of a question A handed over before
 * the stop, reaching B after it, is dropped there without a word (each drop is claimed in the
 * session layer's record of deliveries, which both processes share).
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
import { FakeService } from "../slack/fake-service.js";
import { addRecording, startFileChannel } from "../slack/file-channel.js";
import { startFakeSlackWithAnaAndBo } from "../slack/support.js";
import { processesOnOneRedis } from "./support-lane-stops.js";

/**
 * One session layer for both processes, as their store-backed record of deliveries is one: the
 * drops the lanes claimed in it (a single post id asked), with whether each was theirs to tell.
 */
class SharedService extends FakeService {
  readonly claims: { readonly key: string; readonly told: boolean }[] = [];
  private readonly waiting: (() => void)[] = [];

  override async firstDelivery(keys: readonly string[]): Promise<boolean> {
    const fresh = await super.firstDelivery(keys);
    if (keys.length === 1 && keys[0]?.startsWith("slack:C1:")) {
      this.claims.push({ key: keys[0], told: fresh });
      for (const wake of this.waiting.splice(0)) wake();
    }
    return fresh;
  }

  /** Resolves once `count` drops were claimed and answered. */
  async claimed(count: number): Promise<void> {
    while (this.claims.length < count) await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  texts(): string[] {
    return this.received.map((message) => `${message.user.id}: ${message.text}`);
  }
}

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

  it("tells her once of a post whose twins A and B both read when her stop drops them", async () => {
    const fake = await startFakeSlackWithAnaAndBo();
    cleanup.push(() => fake.close());
    const service = new SharedService();
    /** Process `name` on the shared service, its file reads held until released. */
    const startProcess = async (name: "A" | "B") => {
      const files = await processes.gatedWorkspace(`slack-lane-twins-${name.toLowerCase()}-`);
      const setup = {
        apiUrl: fake.apiUrlFor(name),
        laneStops: await processes.coordination(),
        attachments: files.attachments,
        service,
      };
      await startFileChannel(fake, files.root, setup, cleanup);
      cleanup.push(async () => files.release());
      return files;
    };
    const inA = await startProcess("A");
    const inB = await startProcess("B");
    addRecording(fake);
    const bot = `<@${fake.state.botUserId}>`;
    const ts = fake.state.nextTs();
    const post = {
      user: "U1",
      text: `${bot} listen`,
      ts,
      event_ts: ts,
      channel: "C1",
      team: fake.state.teamId,
      client_msg_id: "c0ffee00-0000-4000-8000-000000000001",
      files: [
        {
          id: "FVOICE",
          name: "voice.ogg",
          title: "voice.ogg",
          mimetype: "audio/ogg",
          filetype: "ogg",
          size: 9,
          url_private: `${fake.baseUrl}/files/FVOICE/voice.ogg`,
          url_private_download: `${fake.baseUrl}/files/FVOICE/download/voice.ogg`,
        },
      ],
    };
    // Socket Mode hands the post's two events to two connections: each process reads the recording.
    fake.sendEvent({ type: "message", channel_type: "channel", subtype: "file_share", ...post }, { to: "A" });
    fake.sendEvent({ type: "app_mention", ...post }, { to: "B" });
    await inA.transcribing;
    await inB.transcribing;

    fake.userPosts({ user: "U1", channel: "C1", threadTs: ts, text: `${bot} stop`, to: "A" });
    await service.claimed(2);
    await fake.waitFor(() => fake.state.messages.some((message) => message.text === droppedNote(1)));

    expect(service.claims.map((claim) => claim.told).sort()).toEqual([false, true]);
    expect(fake.state.messages.filter((message) => message.text.includes("dropped"))).toHaveLength(1);
    expect(service.texts()).toEqual(["U1: stop"]);
  });

  it("drops in B without a word Slack's retry of a question A handed over before her stop", async () => {
    const fake = await startFakeSlackWithAnaAndBo();
    cleanup.push(() => fake.close());
    const root = await mkdtemp(join(os.tmpdir(), "slack-lane-stops-retry-"));
    cleanup.push(() => rm(root, { recursive: true, force: true }));
    const service = new SharedService();
    const onB = await processes.coordination();
    await startFileChannel(
      fake,
      root,
      { apiUrl: fake.apiUrlFor("A"), laneStops: await processes.coordination(), service },
      cleanup,
    );
    await startFileChannel(fake, root, { apiUrl: fake.apiUrlFor("B"), laneStops: onB, service }, cleanup);
    const bot = `<@${fake.state.botUserId}>`;
    const { ts: thread } = fake.userPosts({ user: "U1", channel: "C1", text: `${bot} hello`, to: "A" });
    await service.waitFor(() => service.received.length === 1);
    const askTs = fake.state.nextTs();
    const ask = {
      type: "message",
      channel_type: "channel",
      user: "U1",
      text: `${bot} what is 2+2`,
      ts: askTs,
      event_ts: askTs,
      channel: "C1",
      thread_ts: thread,
      team: fake.state.teamId,
    };
    await fake.sendEvent(ask, { eventId: "EvASK", to: "A" }).acked;
    await service.waitFor(() => service.received.length === 2);
    // Heard on B's own connection: once this listener has the announcement, B's lanes had it.
    let heard!: () => void;
    const announced = new Promise<void>((resolve) => {
      heard = resolve;
    });
    cleanup.push(await onB.subscribe(laneStopChannel("slack"), () => heard()));
    fake.userPosts({ user: "U1", channel: "C1", threadTs: thread, text: `${bot} stop`, to: "A" });
    await announced;

    // Slack retries the question's event (its ack came late), to B.
    await fake.sendEvent(ask, { eventId: "EvASK", retryAttempt: 1, to: "B" }).acked;
    await service.claimed(1);
    fake.userPosts({ user: "U1", channel: "C1", threadTs: thread, text: `${bot} after the stop`, to: "B" });
    await service.waitFor(() => service.received.length === 4);

    expect(service.claims).toEqual([{ key: `slack:C1:${askTs}`, told: false }]);
    expect(service.texts()).toEqual(["U1: hello", "U1: what is 2+2", "U1: stop", "U1: after the stop"]);
    expect(fake.state.messages.filter((message) => message.text.includes("dropped"))).toEqual([]);
  });
});
