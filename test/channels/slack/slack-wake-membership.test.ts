/**
 * SlackChannel.mayAct, the check a scheduled task's or a subscription's wake-up runs under: in a
 * channel, private channel or group DM the person must still be a member of it (a creator who
 * left or was removed no longer acts there), their own DM needs no membership lookup, and a
 * lookup Slack cannot answer rejects — it never counts as allowed.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SlackChannel } from "../../../src/channels/slack/slack-channel.js";
import type { ThreadTarget } from "../../../src/core/thread-target.js";
import type { FakeSlack } from "../../fakes/fake-slack/index.js";
import { FakeService } from "./fake-service.js";
import { fakeSlackChannelOptions, startFakeSlackWithAnaAndBo } from "./support.js";

let fake: FakeSlack;
let channel: SlackChannel;
let workspace: string;

const at = (id: string): ThreadTarget => ({ platform: "slack", workspace: "T1", channel: id, thread: "1.1" });

beforeEach(async () => {
  fake = await startFakeSlackWithAnaAndBo();
  fake.state.addChannel({ id: "G1", name: "secret", type: "group", members: ["U2"] });
  fake.state.addChannel({ id: "G2", name: "mpdm-ana--bo", type: "mpim", members: ["U1", "U2"] });
  workspace = await mkdtemp(join(tmpdir(), "slack-wake-"));
  channel = new SlackChannel(
    fakeSlackChannelOptions(fake, {
      fileMaxBytes: 1024,
      workspaceRoot: workspace,
      service: new FakeService(),
    }),
  );
});

afterEach(async () => {
  await channel.stop();
  await fake.close();
  await rm(workspace, { recursive: true, force: true });
});

describe("SlackChannel.mayAct: membership of the conversation", () => {
  it("refuses someone removed from the channel, and someone never in a private channel", async () => {
    await channel.start();
    expect(await channel.mayAct("U1", at("C1"))).toBe(true);
    expect(await channel.mayAct("U1", at("G2"))).toBe(true);
    fake.state.channels.get("C1")?.members.delete("U1");
    fake.state.channels.get("G2")?.members.delete("U1");
    expect(await channel.mayAct("U1", at("C1"))).toBe(false);
    expect(await channel.mayAct("U1", at("G2"))).toBe(false);
    expect(await channel.mayAct("U1", at("G1"))).toBe(false);
    expect(await channel.mayAct("U2", at("G1"))).toBe(true);
  });

  it("lets the person's own DM through without a membership lookup", async () => {
    await channel.start();
    fake.state.fail("conversations.members", "internal_error");
    expect(await channel.mayAct("U1", at("D1"))).toBe(true);
  });

  it("rejects, never allows, when Slack cannot answer the membership lookup", async () => {
    await channel.start();
    fake.state.fail("conversations.members", "internal_error");
    await expect(channel.mayAct("U1", at("C1"))).rejects.toThrow();
    expect(await channel.mayAct("U1", at("C1"))).toBe(true);
  });
});
