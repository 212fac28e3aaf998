/**
 * Slack's HTTP Events API mode end to end (a real SlackChannel and Bolt's HTTPReceiver on the
 * fake Slack): signed events and interactions are handled once each, after their ack; replays
 * and badly signed or stale requests run nothing.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ACTION_IDS } from "../../../src/channels/slack/slack-blocks.js";
import type { SlackChannel } from "../../../src/channels/slack/slack-channel.js";
import { deliverHttp, slackSignature } from "../../fakes/fake-slack/http-delivery.js";
import type { FakeSlack } from "../../fakes/fake-slack/index.js";
import type { FakeService } from "./fake-service.js";
import {
  EVENTS_PATH,
  type HttpChannelOnFake,
  type LoggedLine,
  SIGNING_SECRET,
  startHttpChannelOnFake,
} from "./http-channel-on-fake.js";

const SECRET = SIGNING_SECRET;
let fake: FakeSlack;
let service: FakeService;
let channel: SlackChannel;
let url: string;
/** The channel's log lines at info and above. */
let logged: LoggedLine[];
let running: HttpChannelOnFake;

beforeEach(async () => {
  running = await startHttpChannelOnFake("info");
  ({ fake, service, channel, logged } = running);
  url = `http://127.0.0.1:${running.port}${EVENTS_PATH}`;
});

afterEach(async () => {
  await running.stop();
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

/** A form body signed now as Slack signs it, ready to post again. */
function signed(form: Record<string, string>): { headers: Record<string, string>; body: string } {
  const body = new URLSearchParams(form).toString();
  const ts = Math.floor(Date.now() / 1000);
  const headers = {
    "content-type": "application/x-www-form-urlencoded",
    "x-slack-request-timestamp": String(ts),
    "x-slack-signature": slackSignature(SECRET, ts, body),
  };
  return { headers, body };
}

/** A signed /coworker request as Slack posts it (an odd one without a trigger id when none is given). */
const signedCommand = (text: string, triggerId?: string) =>
  signed({
    token: "t",
    team_id: fake.state.teamId,
    channel_id: "D1",
    channel_name: "dm",
    user_id: "U1",
    user_name: "ana",
    command: "/coworker",
    text,
    api_app_id: fake.state.appId,
    response_url: new URL("/respond/r1", fake.apiUrl).href,
    ...(triggerId === undefined ? {} : { trigger_id: triggerId }),
  });

/** A signed press of Stop on a message in the DM (odd ones lack the trigger id or action_ts). */
const signedStop = (triggerId: string | undefined, withActionTs = true) =>
  signed({
    payload: JSON.stringify({
      type: "block_actions",
      user: { id: "U1", username: "ana", name: "ana", team_id: fake.state.teamId },
      team: { id: fake.state.teamId, domain: "fake" },
      api_app_id: fake.state.appId,
      token: "t",
      container: { type: "message", message_ts: "1700000000.000100", channel_id: "D1", is_ephemeral: false },
      channel: { id: "D1", name: "dm" },
      message: { type: "message", ts: "1700000000.000100", text: "…" },
      trigger_id: triggerId,
      actions: [
        {
          action_id: ACTION_IDS.stop,
          block_id: "b1",
          type: "button",
          ...(withActionTs ? { action_ts: "1700000001.000200" } : {}),
        },
      ],
    }),
  });

/** Post the request; resolve with the HTTP status. */
async function post(request: { headers: Record<string, string>; body: string }): Promise<number> {
  const response = await fetch(url, { method: "POST", ...request });
  await response.text();
  return response.status;
}

const linesWith = (text: string) => logged.filter((line) => line.msg?.includes(text));
const replayLines = () => linesWith("slack interaction dropped");

describe("HTTP mode: a replayed interaction", () => {
  it("runs a signed slash command posted twice once, and acknowledges both", async () => {
    const captured = signedCommand("status", "1337.42.abc");
    expect(await post(captured)).toBe(200);
    expect(await post(captured)).toBe(200);
    await channel.stop(); // waits for the work after both acks
    expect(service.commands.map((c) => c.name)).toEqual(["status"]);
    expect(replayLines()).toEqual([expect.objectContaining({ kind: "slash command" })]);
  });

  it("still runs two different commands, the same text included", async () => {
    expect(await post(signedCommand("status", "1337.42.one"))).toBe(200);
    expect(await post(signedCommand("status", "1337.42.two"))).toBe(200);
    await channel.stop();
    expect(service.commands.map((c) => c.name)).toEqual(["status", "status"]);
    expect(replayLines()).toEqual([]);
  });

  it("runs a signed button press (Stop) posted twice once", async () => {
    const captured = signedStop("1337.42.press");
    expect(await post(captured)).toBe(200);
    expect(await post(captured)).toBe(200);
    await channel.stop();
    expect(service.presses).toHaveLength(1);
    expect(service.presses[0]).toMatchObject({ kind: "control", control: "stop" });
    expect(replayLines()).toEqual([expect.objectContaining({ kind: "button press" })]);
  });

  it("runs a signed press carrying neither trigger_id nor action_ts once, however often it comes", async () => {
    const captured = signedStop(undefined, false);
    for (let i = 0; i < 3; i++) expect(await post(captured)).toBe(200);
    await channel.stop();
    expect(service.presses).toHaveLength(1);
    expect(replayLines()).toHaveLength(2);
  });

  it("refuses a signed slash command without a trigger id, saying so", async () => {
    expect(await post(signedCommand("status"))).toBe(200);
    await channel.stop();
    expect(service.commands).toEqual([]);
    expect(JSON.stringify(fake.state.responses)).toContain("without its trigger id, so I didn't run it");
    expect(linesWith("slack command refused: no trigger_id")).toHaveLength(1);
  });

  it("runs nothing when the interaction cannot be recorded (the store is down)", async () => {
    service.firstDelivery = async () => {
      throw new Error("store down");
    };
    expect(await post(signedCommand("status", "1337.42.down"))).toBe(200);
    expect(await post(signedStop("1337.42.down-press"))).toBe(200);
    await channel.stop();
    expect(service.commands).toEqual([]);
    expect(service.presses).toEqual([]);
    expect(linesWith("slack command not recorded")).toHaveLength(1);
    expect(linesWith("slack button press failed")).toHaveLength(1);
  });
});
