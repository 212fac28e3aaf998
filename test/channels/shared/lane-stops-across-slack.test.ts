/**
 * A person's stop reaches the file they sent before it in another process: two Slack channels
 * (two processes' Socket Mode connections, A and B, on one fake Slack), each with its own
 * coordination on one real redis-server. Ana's recording is still being transcribed in A when her
 * "stop" in the thread goes to B: B hands the stop over, A never hands the recording over (before,
 * it did, after the stop, starting a turn) and tells her in the thread that one message was
 * dropped; her next message to A is handed over as usual.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { SlackChannel } from "../../../src/channels/slack/slack-channel.js";
import { droppedNote } from "../../../src/channels/shared/hand-over-lanes.js";
import type { AttachmentIntake } from "../../../src/attachments/inbound-attachments.js";
import { createCoordination } from "../../../src/store/coordination/create-coordination.js";
import { createStore } from "../../../src/store/create-store.js";
import type { Store } from "../../../src/store/store.js";
import type { FakeSlack } from "../../fakes/fake-slack/index.js";
import { withOutputs } from "../../support/adapter-outputs.js";
import { gatedTranscription } from "../../support/gated-transcription.js";
import { type RedisServer, startRedisServer } from "../../support/redis-server.js";
import { FakeService } from "../slack/fake-service.js";
import { fakeSlackChannelOptions, startFakeSlackWithAnaAndBo } from "../slack/support.js";

const cleanup: (() => Promise<void>)[] = [];

describe("slack: a stop taken by another process", () => {
  let redis: RedisServer;
  let store: Store;

  beforeAll(async () => {
    redis = await startRedisServer();
    store = await createStore({ url: redis.url, dataDir: os.tmpdir() });
  }, 20_000);

  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  afterAll(async () => {
    await store?.close();
    await redis?.stop();
  });

  /** One process's Slack channel on `fake` (its connection labelled `label`), sharing the redis-server. */
  const processOn = async (fake: FakeSlack, label: string, root: string, attachments?: AttachmentIntake) => {
    const coordination = await createCoordination({ url: redis.url, dataDir: os.tmpdir(), store });
    cleanup.push(() => coordination.close());
    const service = new FakeService();
    const channel = withOutputs(
      new SlackChannel({
        ...fakeSlackChannelOptions(fake, {
          fileMaxBytes: 1024 * 1024,
          workspaceRoot: root,
          service,
          ...(attachments ? { attachments } : {}),
        }),
        apiUrl: fake.apiUrlFor(label),
        laneStops: coordination,
      }),
      service,
    );
    await channel.start();
    cleanup.push(() => channel.stop());
    const texts = () => service.received.map((message) => `${message.user.id}: ${message.text}`);
    return { service, texts };
  };

  it("drops the recording A is still reading when B takes her stop, and A tells her so in the thread", async () => {
    const fake = await startFakeSlackWithAnaAndBo();
    cleanup.push(() => fake.close());
    const root = await mkdtemp(join(os.tmpdir(), "slack-lane-stops-"));
    cleanup.push(() => rm(root, { recursive: true, force: true }));
    const { attachments, transcribing, release, close } = await gatedTranscription(root);
    cleanup.push(close);
    const a = await processOn(fake, "A", root, attachments);
    cleanup.push(async () => release());
    const b = await processOn(fake, "B", root);
    fake.state.addFile({
      id: "FVOICE",
      name: "voice.ogg",
      mimetype: "audio/ogg",
      content: Buffer.from("OggS fake"),
    });
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
});
