/**
 * A SlackChannel started on a fresh fake Slack (with Ana and Bo) in front of a FakeService, on a
 * workspace directory of its own: the set-up of the channel tests that drive the real Bolt app
 * end to end with no session layer behind it. `stop` ends the channel and the fake and removes
 * the workspace.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SlackChannel } from "../../../src/channels/slack/slack-channel.js";
import type { FakeSlack } from "../../fakes/fake-slack/index.js";
import { withOutputs } from "../../support/adapter-outputs.js";
import { FakeService } from "./fake-service.js";
import { fakeSlackChannelOptions, startFakeSlackWithAnaAndBo } from "./support.js";

export interface ChannelOnFake {
  readonly fake: FakeSlack;
  readonly service: FakeService;
  readonly channel: SlackChannel;
  stop(): Promise<void>;
}

/** Start it; `prefix` names the temporary workspace directory. */
export async function startChannelOnFake(prefix: string): Promise<ChannelOnFake> {
  const fake = await startFakeSlackWithAnaAndBo();
  const service = new FakeService();
  const workspace = await mkdtemp(join(tmpdir(), prefix));
  const channel = withOutputs(
    new SlackChannel(
      fakeSlackChannelOptions(fake, { fileMaxBytes: 1024, workspaceRoot: workspace, service }),
    ),
    service,
  );
  await channel.start();
  return {
    fake,
    service,
    channel,
    stop: async () => {
      await channel.stop();
      await fake.close();
      await rm(workspace, { recursive: true, force: true });
    },
  };
}
