/**
 * The Slack HTTP receiver as a stranger on the network meets it (real SlackChannel, Bolt's
 * HTTPReceiver and the intake guard): an unfinished request does not hold up a shutdown.
 */
import type { Server } from "node:http";
import { connect, type Socket } from "node:net";
import { Writable } from "node:stream";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SlackChannel } from "../../../src/channels/slack/slack-channel.js";
import { createLogger } from "../../../src/logging/logger.js";
import { Shutdown } from "../../../src/ops/shutdown.js";
import { type FakeSlack, startFakeSlack } from "../../fakes/fake-slack/index.js";
import { withOutputs } from "../../support/adapter-outputs.js";
import { OPEN_UPLOADS } from "../../support/test-upload-gate.js";
import { FakeService } from "./fake-service.js";

const SECRET = "test-signing-secret";
/** A signature of the right form that is not the request's. */
const FORGED = `v0=${"ab".repeat(32)}`;
let fake: FakeSlack;
let service: FakeService;
let channel: SlackChannel;
let port: number;
let logged: { level: number; msg?: string; kind?: string }[];
const sockets: Socket[] = [];

beforeEach(async () => {
  fake = await startFakeSlack();
  fake.state.addUser({ id: "U1", name: "ana" });
  fake.state.addChannel({ id: "D1", name: "dm", type: "im", members: ["U1"] });
  service = new FakeService();
  logged = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) logged.push(JSON.parse(line));
      done();
    },
  });
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
      logger: pino({ level: "debug" }, sink),
    }),
    service,
  );
  await channel.start();
  port = channel.address()?.port as number;
});

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await channel.stop();
  await fake.close();
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

const signedHeaders = (timestamp = now()) => ({
  "x-slack-request-timestamp": String(timestamp),
  "x-slack-signature": FORGED,
});

describe("Slack HTTP receiver: connections", () => {
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
