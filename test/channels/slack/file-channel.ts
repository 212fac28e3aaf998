/**
 * A Slack channel on the fake Slack that reads the files it is sent into a workspace and hands
 * messages over to a FakeService, and a recording to send it: the set-up shared by the tests of a
 * slow file in one process (slack-slow-files) and of a stop taken by another process
 * (lane-stops-across-slack).
 */
import { SlackChannel, type SlackChannelOptions } from "../../../src/channels/slack/slack-channel.js";
import type { FakeSlack } from "../../fakes/fake-slack/index.js";
import { withOutputs } from "../../support/adapter-outputs.js";
import { FakeService } from "./fake-service.js";
import { fakeSlackChannelOptions } from "./support.js";

/** Put a recording (a voice note, read by transcribing it) on `fake`, as file FVOICE. */
export function addRecording(fake: FakeSlack): void {
  fake.state.addFile({
    id: "FVOICE",
    name: "voice.ogg",
    mimetype: "audio/ogg",
    content: Buffer.from("OggS fake"),
  });
}

/**
 * Start a Slack channel on `fake` with its workspace at `root` and files up to 1 MiB, handing over
 * to a new FakeService, with `setup` over that; its stop is pushed on `cleanup`. `texts` lists what
 * was handed over, as "user: text".
 */
export async function startFileChannel(
  fake: FakeSlack,
  root: string,
  setup: Partial<SlackChannelOptions>,
  cleanup: (() => Promise<void>)[],
) {
  const service = new FakeService();
  const channel = withOutputs(
    new SlackChannel(
      fakeSlackChannelOptions(fake, { fileMaxBytes: 1024 * 1024, workspaceRoot: root, service, ...setup }),
    ),
    service,
  );
  await channel.start();
  cleanup.push(() => channel.stop());
  const texts = () => service.received.map((message) => `${message.user.id}: ${message.text}`);
  return { service, channel, texts };
}
