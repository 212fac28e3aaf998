/**
 * The Slack HTTP receiver as a stranger on the network meets it (real SlackChannel, Bolt's
 * HTTPReceiver and the intake guard): nothing is read before the signature headers look right,
 * bodies are bounded, forged requests are refused and logged through the throttled intake log,
 * the server's connections are bounded, and an unfinished request does not hold up a shutdown.
 */
import { request, type Server } from "node:http";
import { connect, type Socket } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SlackChannel } from "../../../src/channels/slack/slack-channel.js";
import { MAX_CONNECTIONS } from "../../../src/channels/slack/slack-http-receiver.js";
import { SLACK_BODY_LIMIT } from "../../../src/channels/slack/slack-intake-guard.js";
import { createLogger } from "../../../src/logging/logger.js";
import { Shutdown } from "../../../src/ops/shutdown.js";
import { deliverHttp } from "../../fakes/fake-slack/http-delivery.js";
import type { FakeSlack } from "../../fakes/fake-slack/index.js";
import type { FakeService } from "./fake-service.js";
import {
  type HttpChannelOnFake,
  type LoggedLine,
  SIGNING_SECRET,
  startHttpChannelOnFake,
} from "./http-channel-on-fake.js";

const SECRET = SIGNING_SECRET;
/** A signature of the right form that is not the request's. */
const FORGED = `v0=${"ab".repeat(32)}`;
let fake: FakeSlack;
let service: FakeService;
let channel: SlackChannel;
let port: number;
let logged: LoggedLine[];
let running: HttpChannelOnFake;
const sockets: Socket[] = [];

beforeEach(async () => {
  running = await startHttpChannelOnFake("debug");
  ({ fake, service, channel, port, logged } = running);
});

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await running.stop();
});

/** The receiver's Node server (private to the receiver; read here to see what a client meets). */
function serverOf(subject: SlackChannel): Server {
  return (subject as unknown as { receiver: { server: Server } }).receiver.server;
}

const now = () => Math.floor(Date.now() / 1000);

/** Open a connection and send `head` only; resolves once it is written. */
function send(head: string): Promise<Socket> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(head, () => resolve(socket)));
    socket.on("error", () => undefined);
    sockets.push(socket);
  });
}

/** Send a request head declaring `length` body bytes and no body; resolve with the answer's head. */
async function answerBeforeBody(path: string, length: number, headers: Record<string, string> = {}) {
  const lines = Object.entries({
    host: "x",
    "content-type": "application/json",
    "content-length": String(length),
    ...headers,
  }).map(([name, value]) => `${name}: ${value}`);
  const socket = await send(`POST ${path} HTTP/1.1\r\n${lines.join("\r\n")}\r\n\r\n`);
  const head = await new Promise<string>((resolve) => {
    let text = "";
    socket.on("data", (data) => {
      text += String(data);
      if (text.includes("\r\n\r\n")) resolve(text.split("\r\n\r\n")[0] as string);
    });
  });
  const [status, ...fields] = head.split("\r\n");
  return { status, fields: fields.map((field) => field.toLowerCase()) };
}

const signedHeaders = (timestamp = now()) => ({
  "x-slack-request-timestamp": String(timestamp),
  "x-slack-signature": FORGED,
});

describe("Slack HTTP receiver: what is read before the signature", () => {
  it("refuses a POST without signature headers with 401 and Connection: close, before its body", async () => {
    const answer = await answerBeforeBody("/slack/events", 1_000_000);
    expect(answer.status).toBe("HTTP/1.1 401 Unauthorized");
    expect(answer.fields).toContain("connection: close");
  });

  it("refuses a malformed signature, a stale and a future timestamp before the body", async () => {
    const malformed = { ...signedHeaders(), "x-slack-signature": "v0=00" };
    for (const headers of [malformed, signedHeaders(now() - 600), signedHeaders(now() + 600)]) {
      const answer = await answerBeforeBody("/slack/events", 1_000_000, headers);
      expect(answer.status).toBe("HTTP/1.1 401 Unauthorized");
    }
  });

  it("answers a POST to another path itself, unread: 404 and Connection: close", async () => {
    const answer = await answerBeforeBody("/not-slack", 1_000_000);
    expect(answer.status).toBe("HTTP/1.1 404 Not Found");
    expect(answer.fields).toContain("connection: close");
  });

  it("refuses a signed-looking body over the limit with 413 and Connection: close, unread", async () => {
    const answer = await answerBeforeBody("/slack/events", SLACK_BODY_LIMIT + 1, signedHeaders());
    expect(answer.status).toBe("HTTP/1.1 413 Payload Too Large");
    expect(answer.fields).toContain("connection: close");
  });

  it("refuses a signed-looking chunked body once it passes the limit, with 413", async () => {
    const status = await new Promise<number | undefined>((resolve) => {
      const req = request({
        host: "127.0.0.1",
        port,
        path: "/slack/events",
        method: "POST",
        headers: { "content-type": "application/json", ...signedHeaders() },
      });
      req.on("response", (res) => {
        res.resume();
        resolve(res.statusCode);
        req.destroy();
      });
      req.on("error", () => resolve(undefined));
      req.write(Buffer.alloc(SLACK_BODY_LIMIT + 1, 0x20));
    });
    expect(status).toBe(413);
  });

  it("still answers Slack's unsigned ssl_check, and runs nothing smuggled with it", async () => {
    const payload = JSON.stringify({
      type: "block_actions",
      team: { id: fake.state.teamId },
      user: { id: "U1" },
      api_app_id: fake.state.appId,
      actions: [{ action_id: "x", value: "y" }],
    });
    const response = await fetch(`http://127.0.0.1:${port}/slack/events`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ ssl_check: "1", token: "t", payload }).toString(),
    });
    expect(response.status).toBe(200);
    await channel.stop();
    expect(service.presses).toHaveLength(0);
  });
});

describe("Slack HTTP receiver: forged requests", () => {
  it("answers each 401 itself and logs them through the intake log: one warning, then debug", async () => {
    const url = `http://127.0.0.1:${port}/slack/events`;
    const payload = { type: "event_callback", event_id: "Ev1", event: { type: "message" } };
    for (let i = 0; i < 5; i++)
      expect((await deliverHttp(url, SECRET, payload, { signature: FORGED })).status).toBe(401);
    const refused = logged.filter((line) => line.kind === "bad_signature");
    expect(refused.map((line) => line.level)).toEqual([40, 20, 20, 20, 20]);
    expect(logged.filter((line) => line.level >= 40 && line.kind !== "bad_signature")).toEqual([]);
  });
});

describe("Slack HTTP receiver: requests to other paths", () => {
  it("logs a flood of them as one warning, the rest at debug (Bolt logged an info line each)", async () => {
    const before = logged.length;
    for (let i = 0; i < 40; i++) {
      const method = i % 2 === 0 ? "GET" : "POST";
      const response = await fetch(`http://127.0.0.1:${port}/probe/${i}`, { method });
      expect(response.status).toBe(404);
    }
    const get = await fetch(`http://127.0.0.1:${port}/slack/events`);
    expect(get.status).toBe(404);
    const lines = logged.slice(before);
    expect(lines.filter((line) => line.level >= 30)).toEqual([
      expect.objectContaining({ level: 40, kind: "not_the_endpoint" }),
    ]);
    expect(lines.filter((line) => line.kind === "not_the_endpoint")).toHaveLength(41);
  });
});

describe("Slack HTTP receiver: connections", () => {
  it("bounds a request's time and the number of open connections", () => {
    const server = serverOf(channel);
    expect(server.requestTimeout).toBe(10_000);
    expect(server.headersTimeout).toBe(5_000);
    expect(server.maxConnections).toBe(MAX_CONNECTIONS);
  });

  it("lets a graceful shutdown finish while a stranger's POST is unfinished", async () => {
    const arrived = new Promise((resolve) => serverOf(channel).once("request", resolve));
    const head = Object.entries({ host: "x", "content-type": "application/json", "content-length": "100" })
      .concat(Object.entries(signedHeaders()))
      .map(([name, value]) => `${name}: ${value}`)
      .join("\r\n");
    const stranger = await send(`POST /slack/events HTTP/1.1\r\n${head}\r\n\r\n{`);
    let answered = "";
    stranger.on("data", (data) => {
      answered += String(data);
    });
    const cut = new Promise((resolve) => stranger.once("close", resolve));
    await arrived;
    const steps: string[] = [];
    const forced: number[] = [];
    const shutdown = new Shutdown({
      logger: createLogger({ level: "silent" }),
      graceMs: 10_000,
      forceExit: (code) => forced.push(code),
    });
    shutdown.onStopIntake("slack", () => channel.stop());
    shutdown.addDrainer("turns", async () => void steps.push("drain"));
    shutdown.addCloser("store", async () => void steps.push("close store"));
    expect(await shutdown.run("test")).toBe(0);
    expect(steps).toEqual(["drain", "close store"]);
    expect(forced).toEqual([]);
    expect(channel.health().state).toBe("stopped");
    await cut;
    expect(answered).toBe(""); // cut by the stop, not ended later by the server's request timeout
  });
});
