/**
 * A person's stop reaches their running turn at once, whatever Slack's latency: the Stop button,
 * `/coworker stop` and their typed "stop" drop what they have waiting in the thread's hand-over
 * lane, then stop the turn, and only after wait for the note telling them what was dropped.
 * Before, each stopped the turn only once that note was posted — a chat.postMessage with a 30 s
 * deadline and two retries, so up to a minute and a half of a slow Slack while the turn ran on.
 * A typed stop waited for the claims of what it dropped (the session layer's record) before it
 * was handed over. Here the claims and the note's post are held until the test releases them.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ThreadTarget } from "../../../src/core/thread-target.js";
import { droppedNote, NOT_CANCELLED } from "../../../src/channels/shared/hand-over-lanes.js";
import { AccessPolicy } from "../../../src/channels/slack/slack-access.js";
import type { MessageEvent } from "../../../src/channels/slack/slack-events.js";
import { SlackInteractions } from "../../../src/channels/slack/slack-interactions.js";
import { type LaneMessage, SlackLanes } from "../../../src/channels/slack/slack-lanes.js";
import { UserDirectory } from "../../../src/channels/slack/slack-users.js";
import { FakeService } from "./fake-service.js";
import { clientsFor, silentLogger, startFakeSlackWithAnaAndBo } from "./support.js";
import { anaStopPress } from "./stop-press.js";

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** Never settles: a message whose files are still being read holds its lane. */
const reading = new Promise<void>(() => {});

/**
 * SlackLanes whose drop claims and note to a person who stopped are held until `release`, and
 * SlackInteractions stopping their lanes, on the fake Slack. Ana (U1) has a message being read in
 * a thread of #general and one waiting behind it.
 */
async function startWithHeldDrops() {
  const fake = await startFakeSlackWithAnaAndBo();
  cleanup.push(() => fake.close());
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  cleanup.push(async () => release());
  const told: string[] = [];
  const lanes = new SlackLanes({
    logger: silentLogger,
    post: async () => {},
    tell: async (_target, lines) => {
      await held;
      told.push(...lines);
    },
  });
  const clients = clientsFor(fake);
  const users = new UserDirectory(clients.api, silentLogger, () => ({ teamId: fake.state.teamId }));
  const access = new AccessPolicy([], [], { allow: false, account: (id) => users.account(id) });
  const service = new FakeService();
  const thread = fake.state.nextTs();
  const interactions = new SlackInteractions({
    bot: { userId: fake.state.botUserId, botId: fake.state.botId, teamId: fake.state.teamId },
    service,
    clients,
    latest: { latest: async () => thread },
    users,
    access,
    logger: silentLogger,
    stopLane: (target, userId) => lanes.stop(target, userId),
  });
  const target = { platform: "slack", workspace: fake.state.teamId, channel: "C1", thread } as ThreadTarget;
  const message = (ts: string): LaneMessage => ({
    event: { type: "message", channel: "C1", user: "U1", ts, thread_ts: thread } as MessageEvent,
    target,
    author: "U1",
    command: undefined,
    handOver: () => reading,
    claimDrop: () => held.then(() => true),
  });
  void lanes.route(message(fake.state.nextTs()));
  void lanes.route(message(fake.state.nextTs()));
  return { fake, lanes, service, interactions, thread, target, told, release };
}

describe("slack: a stop with the claims and note of what it dropped held", () => {
  it("the Stop press stops the turn before what it dropped is claimed and told", async () => {
    const { fake, service, interactions, thread, told, release } = await startWithHeldDrops();
    const pressing = interactions.press(anaStopPress(fake, thread));
    await vi.waitFor(() => expect(service.presses).toMatchObject([{ kind: "control", control: "stop" }]), {
      timeout: 2000,
    });
    expect(told).toEqual([]);
    release();
    await pressing;
    expect(told).toEqual([droppedNote(2)]);
    expect(fake.state.ephemerals).toEqual([]);
  });

  it("/coworker stop stops the turn before what it dropped is claimed and told", async () => {
    const { fake, service, interactions, told, release } = await startWithHeldDrops();
    const replies: string[] = [];
    const commanding = interactions.command(
      { user_id: "U1", team_id: fake.state.teamId, channel_id: "C1", text: "stop", trigger_id: "T-slash" },
      async (reply) => void replies.push(reply.text),
    );
    await vi.waitFor(() => expect(service.commands).toMatchObject([{ name: "stop" }]), { timeout: 2000 });
    expect(told).toEqual([]);
    release();
    await commanding;
    expect(told).toEqual([droppedNote(2)]);
    expect(replies).toHaveLength(1);
  });

  it("a typed stop is handed over (stopping the turn) before what it dropped is claimed and told", async () => {
    const { fake, lanes, target, thread, told, release } = await startWithHeldDrops();
    const handedOver = vi.fn(async () => {});
    const routing = lanes.route({
      event: {
        type: "message",
        channel: "C1",
        user: "U1",
        ts: fake.state.nextTs(),
        thread_ts: thread,
      } as MessageEvent,
      target,
      author: "U1",
      command: { ok: true, command: { name: "stop" } },
      handOver: handedOver,
      claimDrop: async () => true,
    });
    await vi.waitFor(() => expect(handedOver).toHaveBeenCalledWith(NOT_CANCELLED), { timeout: 2000 });
    expect(told).toEqual([]);
    release();
    expect(await routing).toEqual({ kind: "answered" });
    expect(told).toEqual([droppedNote(2)]);
  });
});
