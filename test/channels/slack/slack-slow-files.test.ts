/**
 * A slow file in a Slack thread (a recording being transcribed) holds only its own sender's later
 * messages there: another person's message and "stop", and the sender's own "stop", reach the
 * session layer at once, while the sender's next message still follows their file.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { AttachmentIntake } from "../../../src/attachments/inbound-attachments.js";
import { SlackChannel } from "../../../src/channels/slack/slack-channel.js";
import { createStore } from "../../../src/store/create-store.js";
import { storeSlotBudget } from "../../../src/store/slot-budget.js";
import { createWorkspacePaths } from "../../../src/tools/files/workspace-paths.js";
import { withOutputs } from "../../support/adapter-outputs.js";
import { FakeService } from "./fake-service.js";
import { fakeSlackChannelOptions, startFakeSlackWithAnaAndBo } from "./support.js";

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

describe("slack: a slow file", () => {
  it("holds neither another person's message and stop nor its sender's stop; the sender's next message follows the file", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started!: () => void;
    const transcribing = new Promise<void>((resolve) => {
      started = resolve;
    });
    const fake = await startFakeSlackWithAnaAndBo();
    cleanup.push(() => fake.close());
    const store = await createStore({ url: "memory:", dataDir: tmpdir() });
    cleanup.push(() => store.close());
    const root = await mkdtemp(join(tmpdir(), "slack-slow-"));
    cleanup.push(() => rm(root, { recursive: true, force: true }));
    const service = new FakeService();
    const channel = withOutputs(
      new SlackChannel(
        fakeSlackChannelOptions(fake, {
          fileMaxBytes: 1024 * 1024,
          workspaceRoot: root,
          service,
          attachments: new AttachmentIntake({
            workspace: createWorkspacePaths({ root }),
            logger: pino({ level: "silent" }),
            transcription: {
              transcriber: {
                transcribe: async () => {
                  started();
                  await gate;
                  return "the recording";
                },
              },
              budget: storeSlotBudget(store.space("budgets")),
            },
          }),
        }),
      ),
      service,
    );
    await channel.start();
    cleanup.push(() => channel.stop());
    const bot = `<@${fake.state.botUserId}>`;
    fake.state.addFile({
      id: "FVOICE",
      name: "voice.ogg",
      mimetype: "audio/ogg",
      content: Buffer.from("OggS fake"),
    });
    const { ts } = fake.userPosts({ user: "U1", channel: "C1", text: `${bot} listen`, files: ["FVOICE"] });
    await transcribing;
    fake.userPosts({ user: "U1", channel: "C1", threadTs: ts, text: `${bot} and summarise it` });
    fake.userPosts({ user: "U2", channel: "C1", threadTs: ts, text: `${bot} stop` });
    fake.userPosts({ user: "U2", channel: "C1", threadTs: ts, text: `${bot} are you there?` });
    fake.userPosts({ user: "U1", channel: "C1", threadTs: ts, text: `${bot} stop` });
    const texts = () => service.received.map((message) => `${message.user.id}: ${message.text}`);
    await service.waitFor(() => service.received.length === 3);
    expect(texts()).toEqual(["U2: stop", "U2: are you there?", "U1: stop"]);
    release();
    await service.waitFor(() => service.received.length === 5);
    expect(texts().slice(3)).toEqual(["U1: listen", "U1: and summarise it"]);
  });
});
