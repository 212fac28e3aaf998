/**
 * A SlackChannel (on a FakeService) over a fake Slack with Ana and Bo and a temporary workspace
 * folder, started for one test and stopped, closed and removed after it: the setup of channel tests
 * that push raw Socket Mode deliveries.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { SlackChannel, type SlackChannelOptions } from "../../../src/channels/slack/slack-channel.js";
import type { FakeSlack } from "../../fakes/fake-slack/index.js";
import { withOutputs } from "../../support/adapter-outputs.js";
import { FakeService } from "./fake-service.js";
import { fakeSlackChannelOptions, startFakeSlackWithAnaAndBo } from "./support.js";

/** A started channel, its fake Slack and the service it hands deliveries to. */
export interface StartedSlackChannel {
  readonly fake: FakeSlack;
  readonly channel: SlackChannel;
  readonly service: FakeService;
}

/**
 * Registers the cleanup after each test; the function returned starts a channel for the running
 * test (1 KB files, a fresh folder named after `prefix`), with `setup` over those options.
 */
export function useFakeSlackChannel(
  prefix: string,
): (setup?: Partial<SlackChannelOptions>) => Promise<StartedSlackChannel> {
  const stops: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
  });
  return async (setup = {}) => {
    const fake = await startFakeSlackWithAnaAndBo();
    const dir = await mkdtemp(join(tmpdir(), prefix));
    const service = new FakeService();
    const options = fakeSlackChannelOptions(fake, {
      fileMaxBytes: 1024,
      workspaceRoot: dir,
      service,
      ...setup,
    });
    const channel = withOutputs(new SlackChannel(options), service);
    stops.push(async () => {
      await channel.stop();
      await fake.close();
      await rm(dir, { recursive: true, force: true });
    });
    await channel.start();
    return { fake, channel, service };
  };
}
