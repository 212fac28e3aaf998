import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SlackChannel } from "../../../src/channels/slack/slack-channel.js";
import { deliverHttp } from "../../fakes/fake-slack/http-delivery.js";
import { type FakeSlack, startFakeSlack } from "../../fakes/fake-slack/index.js";
import { FakeService } from "./fake-service.js";
import { silentLogger } from "./support.js";
import { withOutputs } from "../../support/adapter-outputs.js";
import { OPEN_UPLOADS } from "../../support/test-upload-gate.js";

const SECRET = "test-signing-secret";
let fake: FakeSlack;
let service: FakeService;
let channel: SlackChannel;
let url: string;

beforeEach(async () => {
  fake = await startFakeSlack();
  fake.state.addUser({ id: "U1", name: "ana" });
  fake.state.addChannel({ id: "D1", name: "dm", type: "im", members: ["U1"] });
  service = new FakeService();
  channel = withOutputs(
    new SlackChannel({
      botToken: fake.state.botToken,
      signingSecret: SECRET,
      apiUrl: fake.apiUrl,
      http: { port: 0, path: "/slack/events", host: "127.0.0.1" },
      requireMentionInThreads: false,
      allowedUsers: [],
      allowedChannels: [],
      allowedBots: [],
      fileMaxBytes: 1_000,
      uploads: OPEN_UPLOADS,
      workspaceRoot: "/tmp",
      service,
      logger: silentLogger,
    }),
    service,
  );
  await channel.start();
  url = `http://127.0.0.1:${channel.address()?.port}/slack/events`;
});

afterEach(async () => {
  await channel.stop();
  await fake.close();
});

const eventPayload = (eventId: string, text: string) => ({
  token: "t",
  team_id: fake.state.teamId,
  api_app_id: fake.state.appId,
  type: "event_callback",
  event_id: eventId,
  event_time: 1,
  event: { type: "message", channel: "D1", channel_type: "im", user: "U1", text, ts: fake.state.nextTs() },
});

describe("HTTP Events API mode", () => {
  it("is ready once listening and handles signed events after acknowledging them", async () => {
    expect(channel.health().ready).toBe(true);
    expect(channel.health().state).toBe("listening");
    expect(channel.description).toBe("slack (http :0/slack/events)");
    expect(fake.state.callsOf("apps.connections.open")).toHaveLength(0);
    const delivery = await deliverHttp(url, SECRET, eventPayload("Ev1", "over http"));
    expect(delivery.status).toBe(200);
    await service.waitFor(() => service.received.length === 1);
    expect(service.received[0]!.text).toBe("over http");
  });

  it("rejects requests with a bad signature or a stale timestamp", async () => {
    const forged = await deliverHttp(url, SECRET, eventPayload("Ev2", "forged"), {
      signature: "v0=deadbeef",
    });
    const stale = await deliverHttp(url, SECRET, eventPayload("Ev3", "stale"), {
      timestamp: Math.floor(Date.now() / 1000) - 600,
    });
    expect(forged.status).toBe(401);
    expect(stale.status).toBe(401);
    await deliverHttp(url, SECRET, eventPayload("Ev4", "genuine"));
    await service.waitFor(() => service.received.length === 1);
    expect(service.received.map((m) => m.text)).toEqual(["genuine"]);
  });

  it("answers Slack's URL verification challenge", async () => {
    const delivery = await deliverHttp(url, SECRET, {
      type: "url_verification",
      challenge: "abc123",
      token: "t",
    });
    expect(delivery.status).toBe(200);
    expect(delivery.body).toContain("abc123");
  });
});
