/**
 * Test support: a SlackChannel in HTTP Events API mode on the fake Slack (Ana, U1, and her DM
 * D1), listening on loopback at /slack/events with a known signing secret, every log line it
 * writes at `level` and above collected — what the HTTP-mode tests start before each test; and
 * the same channel built but not started, for the tests of its start.
 */
import { Writable } from "node:stream";
import pino, { type Logger } from "pino";
import type { LaneStopCoordination } from "../../../src/channels/shared/lane-stop-broadcast.js";
import { SlackChannel } from "../../../src/channels/slack/slack-channel.js";
import { type FakeSlack, startFakeSlack } from "../../fakes/fake-slack/index.js";
import { withOutputs } from "../../support/adapter-outputs.js";
import { OPEN_UPLOADS } from "../../support/test-upload-gate.js";
import { FakeService } from "./fake-service.js";

/** The signing secret the channel checks requests against. */
export const SIGNING_SECRET = "test-signing-secret";
/** The path the channel's events server answers on. */
export const EVENTS_PATH = "/slack/events";

/** One log line the channel wrote. */
export interface LoggedLine {
  readonly level: number;
  readonly msg?: string;
  readonly kind?: string;
}

/** A started HTTP-mode channel and what the test reads of it. */
export interface HttpChannelOnFake {
  readonly fake: FakeSlack;
  readonly service: FakeService;
  readonly channel: SlackChannel;
  readonly port: number;
  readonly logged: LoggedLine[];
  /** Stop the channel, then the fake. */
  stop(): Promise<void>;
}

/** What an HTTP-mode channel is built with besides the fake Slack. */
export interface HttpChannelSetup {
  readonly service: FakeService;
  readonly logger: Logger;
  /** The coordination of the other processes' lane stops, when the test has one. */
  readonly laneStops?: LaneStopCoordination;
}

/** An HTTP-mode channel on `fake`, its outputs registered with the service, not yet started. */
export function httpChannelOn(fake: FakeSlack, setup: HttpChannelSetup): SlackChannel {
  return withOutputs(
    new SlackChannel({
      botToken: fake.state.botToken,
      signingSecret: SIGNING_SECRET,
      apiUrl: fake.apiUrl,
      http: { port: 0, path: EVENTS_PATH, host: "127.0.0.1" },
      requireMentionInThreads: false,
      allowedUsers: [],
      allowedChannels: [],
      allowedBots: [],
      fileMaxBytes: 1_000,
      uploads: OPEN_UPLOADS,
      workspaceRoot: "/tmp",
      ...setup,
    }),
    setup.service,
  );
}

/** Start the fake Slack and an HTTP-mode channel on it (see the module comment). */
export async function startHttpChannelOnFake(level: "debug" | "info"): Promise<HttpChannelOnFake> {
  const fake = await startFakeSlack();
  fake.state.addUser({ id: "U1", name: "ana" });
  fake.state.addChannel({ id: "D1", name: "dm", type: "im", members: ["U1"] });
  const service = new FakeService();
  const logged: LoggedLine[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) logged.push(JSON.parse(line));
      done();
    },
  });
  const channel = httpChannelOn(fake, { service, logger: pino({ level }, sink) });
  await channel.start();
  const port = channel.address()?.port as number;
  return {
    fake,
    service,
    channel,
    port,
    logged,
    stop: async () => {
      await channel.stop();
      await fake.close();
    },
  };
}
