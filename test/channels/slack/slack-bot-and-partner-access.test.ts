/**
 * Who the real Slack channel (Bolt on the fake Slack) serves beyond the workspace's people: an
 * allowed bot is served when allowed_users is set too, and its scheduled tasks and subscriptions
 * still wake in a channel its bot user is in (membership is asked for its bot user, bots.info);
 * a bot allowed_bots no longer names is not; a Slack Connect partner (users.info is_stranger, or
 * another home team) is no member for "anyone who is no guest", even with allow_external on.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { REFUSALS } from "../../../src/channels/slack/slack-access.js";
import { SlackChannel, type SlackChannelOptions } from "../../../src/channels/slack/slack-channel.js";
import type { ThreadTarget } from "../../../src/core/thread-target.js";
import type { FakeSlack } from "../../fakes/fake-slack/index.js";
import { withOutputs } from "../../support/adapter-outputs.js";
import { FakeService } from "./fake-service.js";
import { fakeSlackChannelOptions, startFakeSlackWithAnaAndBo } from "./support.js";

let fake: FakeSlack;
let channel: SlackChannel | undefined;
let service: FakeService;
let workspace: string;

beforeEach(async () => {
  fake = await startFakeSlackWithAnaAndBo();
  // The deploy bot: bot id B7, bot user U0DEPLOY, in #general.
  fake.state.addUser({ id: "U0DEPLOY", name: "deploy", botId: "B7" });
  fake.state.channels.get("C1")?.members.add("U0DEPLOY");
  fake.state.addUser({ id: "U0PARTNER", name: "eve", team: "T0PARTNER", stranger: true });
  fake.state.addChannel({ id: "C0SHARED", name: "shared", type: "channel", members: ["U1", "U0PARTNER"] });
  workspace = await mkdtemp(join(tmpdir(), "slack-bot-partner-"));
  service = new FakeService();
});

afterEach(async () => {
  await channel?.stop();
  channel = undefined;
  await fake.close();
  await rm(workspace, { recursive: true, force: true });
});

async function start(options: Partial<SlackChannelOptions>): Promise<SlackChannel> {
  const setup = { fileMaxBytes: 1024, workspaceRoot: workspace, service, ...options };
  channel = withOutputs(new SlackChannel(fakeSlackChannelOptions(fake, setup)), service);
  await channel.start();
  return channel;
}

const inChannel = (id: string): ThreadTarget => ({
  platform: "slack",
  workspace: "T1",
  channel: id,
  thread: "1.1",
  extra: { kind: "channel" },
});

describe("an allowed bot", () => {
  it("is served when allowed_users names people too", async () => {
    await start({ allowedUsers: ["U1"], allowedBots: ["B7"] });
    const post = { type: "message", channel: "D1", channel_type: "im", team: fake.state.teamId };
    await fake.sendEvent({
      ...post,
      subtype: "bot_message",
      bot_id: "B7",
      text: "deployed",
      ts: fake.state.nextTs(),
    }).acked;
    const received = await fake.waitFor(() => service.received[0], "the bot's message");
    expect(received.user.id).toBe("B7");
    expect(fake.state.ephemerals).toHaveLength(0);
  });

  it("wakes its channel task while its bot user is in the channel, and not once it left", async () => {
    const slack = await start({ allowedBots: ["B7"] });
    expect(await slack.mayAct("B7", inChannel("C1"))).toBe(true);
    expect(await slack.mayAct("B7", inChannel("C0SHARED"))).toBe(false);
    fake.state.channels.get("C1")?.members.delete("U0DEPLOY");
    expect(await slack.mayAct("B7", inChannel("C1"))).toBe(false);
  });

  it("rejects (cannot tell now) rather than refuses when bots.info fails", async () => {
    const slack = await start({ allowedBots: ["B7"] });
    fake.state.fail("bots.info", "internal_error");
    await expect(slack.mayAct("B7", inChannel("C1"))).rejects.toThrow();
    expect(await slack.mayAct("B7", inChannel("C1"))).toBe(true);
  });

  it("no longer acts once allowed_bots does not name it, in a DM or a channel", async () => {
    const slack = await start({ allowedBots: ["B8"] });
    expect(await slack.mayAct("B7", { ...inChannel("D9"), extra: { kind: "dm" } })).toBe(false);
    expect(await slack.mayAct("B7", inChannel("C1"))).toBe(false);
  });
});

describe("a Slack Connect partner with allow_external on and no allowed_users", () => {
  it("is refused as someone of another organisation, where a member is served", async () => {
    await start({ allowExternal: true, allowGuests: true });
    fake.userPosts({
      user: "U0PARTNER",
      channel: "C0SHARED",
      text: `<@${fake.state.botUserId}> read the repo`,
      team: "T0PARTNER",
    });
    const refusal = await fake.waitFor(
      () => fake.state.ephemerals.find((e) => e.user === "U0PARTNER"),
      "the refusal",
    );
    expect(refusal.text).toBe(REFUSALS.external);
    fake.userPosts({ user: "U1", channel: "C0SHARED", text: `<@${fake.state.botUserId}> hi` });
    await fake.waitFor(() => service.received.find((m) => m.user.id === "U1"), "the member's message");
    expect(service.received.map((m) => m.user.id)).toEqual(["U1"]);
  });

  it("is served once allowed_users names them", async () => {
    await start({ allowExternal: true, allowedUsers: ["U0PARTNER"] });
    fake.userPosts({
      user: "U0PARTNER",
      channel: "C0SHARED",
      text: `<@${fake.state.botUserId}> hi`,
      team: "T0PARTNER",
    });
    await fake.waitFor(
      () => service.received.find((m) => m.user.id === "U0PARTNER"),
      "the partner's message",
    );
  });
});
