/**
 * A Slack edit that adds the bot's mention to an earlier reply, after its author's stop in that
 * thread: Slack sends the edit's app_mention with the reply's own ts, which is before the stop's,
 * yet the edit is a request made after the stop. It has no lane position (slack-inbound.ts), so
 * the stop's mark does not drop it as "still being read": it is handed over, and nobody is told
 * a message was dropped.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { droppedNote } from "../../../src/channels/shared/hand-over-lanes.js";
import { startFileChannel } from "./file-channel.js";
import { startFakeSlackWithAnaAndBo } from "./support.js";

describe("slack: an edit adding the mention after a stop", () => {
  const cleanup: (() => Promise<void>)[] = [];

  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  it("hands over the edit of a reply sent before the stop, telling nobody it was dropped", async () => {
    const fake = await startFakeSlackWithAnaAndBo();
    cleanup.push(() => fake.close());
    const root = await mkdtemp(join(os.tmpdir(), "slack-lane-edit-"));
    cleanup.push(() => rm(root, { recursive: true, force: true }));
    const channel = await startFileChannel(fake, root, {}, cleanup);
    const bot = `<@${fake.state.botUserId}>`;
    const thread = "9.000100";
    // Ana's reply without the mention, in a thread the bot takes no part in: passed over.
    const reply = { channel: "C1", user: "U1", ts: fake.state.nextTs(), thread_ts: thread };
    await fake.sendEvent({ type: "message", channel_type: "channel", ...reply, text: "summarise this" })
      .acked;
    // Then her stop in that thread, mentioning the bot.
    fake.userPosts({ user: "U1", channel: "C1", threadTs: thread, text: `${bot} stop` });
    await channel.service.waitFor(() => channel.service.received.length === 1);
    // Then she edits the mention into her reply: an app_mention with the reply's ts.
    const edited = { user: "U1", ts: fake.state.nextTs() };
    await fake.sendEvent({ type: "app_mention", ...reply, text: `${bot} summarise this, please`, edited })
      .acked;
    await channel.service.waitFor(() => channel.service.received.length === 2);

    expect(channel.texts()).toEqual(["U1: stop", "U1: summarise this, please"]);
    expect(fake.state.messages.filter((message) => message.text === droppedNote(1))).toEqual([]);
  });
});
