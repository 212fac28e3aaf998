/**
 * A thread's order (slack-inbound.ts) holds each event while Slack answers its access check. A
 * sender flooding a thread while that check is slow has at most ORDER_MAX_WAITING events waiting
 * there: the rest are refused at once, logged without their text, the sender told privately once
 * per burst (never in the thread). Another person's message in that thread is still taken, and
 * handed over once the checks answer.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { AttachmentIntake } from "../../../src/attachments/inbound-attachments.js";
import { AccessPolicy, REFUSALS } from "../../../src/channels/slack/slack-access.js";
import { SlackInbound } from "../../../src/channels/slack/slack-inbound.js";
import { ORDER_FULL, ORDER_MAX_WAITING } from "../../../src/channels/slack/slack-thread-order.js";
import { LatestThreads } from "../../../src/channels/slack/slack-latest-threads.js";
import { ThreadRegistry } from "../../../src/channels/slack/slack-threads.js";
import { UserDirectory } from "../../../src/channels/slack/slack-users.js";
import { createWorkspacePaths } from "../../../src/tools/files/workspace-paths.js";
import type { FakeSlack } from "../../fakes/fake-slack/index.js";
import { OPEN_UPLOADS } from "../../support/test-upload-gate.js";
import { FakeService } from "./fake-service.js";
import { clientsFor, silentLogger, startFakeSlackWithAnaAndBo } from "./support.js";

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** A gate the access check waits at while it is held. */
function accessGate() {
  let open = Promise.resolve();
  let release = () => {};
  return {
    hold: () => {
      open = new Promise<void>((resolve) => {
        release = resolve;
      });
    },
    release: () => release(),
    passed: () => open,
  };
}

/**
 * SlackInbound on the fake Slack, Mallory (U9, a guest: refused once checked) added, its access
 * check waiting at `gate`; `logs` are its log lines.
 */
async function startInbound() {
  const fake = await startFakeSlackWithAnaAndBo();
  cleanup.push(() => fake.close());
  fake.state.addUser({ id: "U9", name: "mallory", guest: true });
  const root = await mkdtemp(join(tmpdir(), "slack-order-"));
  cleanup.push(() => rm(root, { recursive: true, force: true }));
  const logs: Record<string, unknown>[] = [];
  const logger = pino({ level: "info" }, { write: (line: string) => void logs.push(JSON.parse(line)) });
  const gate = accessGate();
  const clients = clientsFor(fake);
  const service = new FakeService();
  const users = new UserDirectory(clients.api, silentLogger, () => ({ teamId: fake.state.teamId }));
  const access = new AccessPolicy([], [], {
    allow: false,
    account: async (id) => {
      await gate.passed();
      return users.account(id);
    },
  });
  const workspace = createWorkspacePaths({ root, offLimits: [] });
  const inbound = new SlackInbound({
    bot: { userId: fake.state.botUserId, botId: fake.state.botId, teamId: fake.state.teamId },
    service,
    clients,
    threads: new ThreadRegistry(service, new LatestThreads({ workspace: () => fake.state.teamId, logger })),
    users,
    access,
    allowedBots: new Set(),
    requireMentionInThreads: false,
    files: {
      botToken: fake.state.botToken,
      apiUrl: fake.apiUrl,
      maxBytes: 1024,
      workspace,
      uploads: OPEN_UPLOADS,
    },
    attachments: new AttachmentIntake({ workspace, logger }),
    logger,
  });
  cleanup.push(() => inbound.stop());
  return { fake, gate, inbound, service, logs };
}

/** `user`'s mention of the bot in thread `thread` of #general, as Slack delivers it. */
function mention(fake: FakeSlack, user: string, thread: string, text: string) {
  const ts = fake.state.nextTs();
  const event = {
    type: "app_mention",
    channel: "C1",
    channel_type: "channel",
    user,
    text: `<@${fake.state.botUserId}> ${text}`,
    ts,
    thread_ts: thread,
  };
  return { event, envelope: { event_id: `Ev${ts}`, team_id: fake.state.teamId } };
}

describe("slack: a thread's order while the access check is slow", () => {
  it("holds at most ORDER_MAX_WAITING of one sender's events, refusing the rest (the sender told privately once), and never another sender's", async () => {
    const { fake, gate, inbound, service, logs } = await startInbound();
    const thread = fake.state.nextTs();
    gate.hold();
    const flood = Array.from({ length: ORDER_MAX_WAITING + 5 }, (_, i) => {
      const { event, envelope } = mention(fake, "U9", thread, `secret flood ${i}`);
      return inbound.handle(event, envelope);
    });
    const fromAna = mention(fake, "U1", thread, "my question");
    const ana = inbound.handle(fromAna.event, fromAna.envelope);
    // Before, every event waited in the thread's order, without bound, until Slack answered.
    await fake.waitFor(
      () => fake.state.ephemerals.some((ephemeral) => ephemeral.text === ORDER_FULL),
      "the flooder told the thread's order is full",
    );
    // The refused ones are done while the check is still held.
    await Promise.all(flood.slice(ORDER_MAX_WAITING));
    const refusals = logs.filter((line) => line.msg === "slack thread order full: message not taken");
    expect(refusals).toHaveLength(5);
    expect(refusals.filter((line) => line.told === true)).toHaveLength(1);
    expect(JSON.stringify(logs)).not.toContain("secret flood");
    expect(fake.state.ephemerals).toEqual([
      { channel: "C1", user: "U9", text: ORDER_FULL, threadTs: thread },
    ]);
    expect(fake.state.botMessages("C1", thread)).toEqual([]);

    gate.release();
    await Promise.all([...flood, ana]);
    // Ana's message, in the same thread after the flood, was taken; Mallory's were checked and refused.
    expect(service.received.map((message) => `${message.user.id}: ${message.text}`)).toEqual([
      "U1: my question",
    ]);
    expect(fake.state.ephemerals.map((ephemeral) => `${ephemeral.user}: ${ephemeral.text}`)).toEqual([
      `U9: ${ORDER_FULL}`,
      `U9: ${REFUSALS.guest}`,
    ]);

    // The burst is over once none of Mallory's waits: a new one is told again, once.
    gate.hold();
    const again = Array.from({ length: ORDER_MAX_WAITING + 2 }, (_, i) => {
      const { event, envelope } = mention(fake, "U9", thread, `secret again ${i}`);
      return inbound.handle(event, envelope);
    });
    await Promise.all(again.slice(ORDER_MAX_WAITING));
    expect(fake.state.ephemerals.filter((ephemeral) => ephemeral.text === ORDER_FULL)).toHaveLength(2);
    gate.release();
    await Promise.all(again);
  });
});
