/**
 * SlackInbound alone on the fake Slack, handing over to a FakeService, for tests of what it does
 * with events (slack-inbound-order: a thread's order; slack-lane-position: where a message stands
 * in its sender's lane; slack-lane-stop-press: a Stop press's or slash command's stop on the
 * lanes). Its access check may wait at a gate, and its log lines are kept.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { AttachmentIntake } from "../../../src/attachments/inbound-attachments.js";
import { AccessPolicy } from "../../../src/channels/slack/slack-access.js";
import { SlackInbound } from "../../../src/channels/slack/slack-inbound.js";
import { LatestThreads } from "../../../src/channels/slack/slack-latest-threads.js";
import { ThreadRegistry } from "../../../src/channels/slack/slack-threads.js";
import { UserDirectory } from "../../../src/channels/slack/slack-users.js";
import type { StopsElsewhere } from "../../../src/channels/shared/hand-over-lanes.js";
import { createWorkspacePaths } from "../../../src/tools/files/workspace-paths.js";
import type { FakeSlack } from "../../fakes/fake-slack/index.js";
import { OPEN_UPLOADS } from "../../support/test-upload-gate.js";
import { FakeService } from "./fake-service.js";
import { clientsFor, silentLogger, startFakeSlackWithAnaAndBo } from "./support.js";

/** A gate the access check waits at while it is held. */
export function accessGate() {
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

export interface InboundSetup {
  /** The workspace files are saved in; a new temporary folder by default. */
  readonly root?: string;
  /** Reads files into model input; one over the workspace by default. */
  readonly attachments?: AttachmentIntake;
  /** Where a sender's stop is announced to other processes (none by default). */
  readonly stopsElsewhere?: StopsElsewhere;
}

/**
 * SlackInbound on the fake Slack, Mallory (U9, a guest: refused once checked) added, its access
 * check waiting at `gate`, files up to 1 MiB; `logs` are its log lines. Everything started is
 * pushed on `cleanup`.
 */
export async function startInbound(cleanup: (() => Promise<void>)[], setup: InboundSetup = {}) {
  const fake = await startFakeSlackWithAnaAndBo();
  cleanup.push(() => fake.close());
  fake.state.addUser({ id: "U9", name: "mallory", guest: true });
  const root = setup.root ?? (await mkdtemp(join(tmpdir(), "slack-inbound-")));
  if (!setup.root) cleanup.push(() => rm(root, { recursive: true, force: true }));
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
      maxBytes: 1024 * 1024,
      workspace,
      uploads: OPEN_UPLOADS,
    },
    attachments: setup.attachments ?? new AttachmentIntake({ workspace, logger }),
    logger,
    stopsElsewhere: setup.stopsElsewhere,
  });
  await inbound.listen();
  cleanup.push(() => inbound.stop());
  return { fake, gate, inbound, service, logs, clients, users, access };
}

/** `user`'s mention of the bot in thread `thread` of #general, as Slack delivers it (`ts`: its own, or the fake's next). */
export function mention(
  fake: FakeSlack,
  user: string,
  thread: string,
  text: string,
  ts = fake.state.nextTs(),
) {
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
