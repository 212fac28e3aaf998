/**
 * SocketClient, Coworker's Socket Mode client: it connects again when its thread dies, when Slack
 * asks it to, after Slack was unreachable or answered with an error, asking apps.connections.open
 * once per attempt (its loop is the only one that retries), also when the readiness
 * watchdog's own try fails meanwhile, and stops (ending its thread) when its token is refused; an
 * envelope arriving while it stops is neither handed on nor acked; an attempt that
 * never gets Slack's hello (the upgrade unanswered, or no hello on an open socket) fails instead of
 * hanging; a rate limit's Retry-After is waited out; a connection that keeps dropping right after
 * hello is made again ever more slowly; Slack's close reason reaches the error, and a URL that is
 * not a WebSocket's is refused without being quoted (its ticket is a credential).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import type { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import pino, { type Logger } from "pino";
import { WebSocketServer } from "ws";
import { socketModeFailure } from "../../../src/channels/slack/slack-failure.js";
import { SocketClient } from "../../../src/channels/slack/slack-socket-client.js";
import { startFakeSlackThread } from "../../fakes/fake-slack/in-thread.js";
import { type FakeSlack, startFakeSlack } from "../../fakes/fake-slack/index.js";
import { silentLogger } from "./support.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A SocketClient for `apiUrl` that drops what it receives, stopped after the test. */
function clientFor(
  apiUrl: string,
  appToken: string,
  timeoutsMs = { ping: 5_000, server: 30_000 },
  frame: (text: string, acked: boolean) => void = () => undefined,
  logger: Logger = silentLogger,
): SocketClient {
  const client = new SocketClient(
    {
      appToken,
      slackApiUrl: apiUrl,
      logger,
      clientPingTimeoutMs: timeoutsMs.ping,
      serverPingTimeoutMs: timeoutsMs.server,
      mainSilenceMs: 10_000,
    },
    { frame, refused() {} },
  );
  cleanups.push(() => client.stop());
  return client;
}

/** A client on the fake Slack, recording the states it goes through. */
async function connectedTo(fake: FakeSlack): Promise<{ client: SocketClient; states: string[] }> {
  const states: string[] = [];
  const client = clientFor(fake.apiUrl, fake.state.appToken);
  for (const state of ["connected", "reconnecting", "disconnected"])
    client.on(state, () => states.push(state));
  await client.start();
  return { client, states };
}

/**
 * A client that connected to a fake Slack and then gave up: its token was revoked, so retrying
 * could not help (SocketHealth's watchdog takes over).
 */
async function givenUp(): Promise<{ fake: FakeSlack; client: SocketClient; states: string[] }> {
  const fake = await startFakeSlack();
  cleanups.push(() => fake.close());
  const { client, states } = await connectedTo(fake);
  fake.state.fail("apps.connections.open", "token_revoked");
  fake.socket.requestReconnect();
  await expect.poll(() => states, { timeout: 30_000 }).toEqual(["connected", "reconnecting", "disconnected"]);
  return { fake, client, states };
}

type SocketBehaviour =
  | "no-upgrade"
  | "no-hello"
  | "drop-after-hello"
  | "refuse-1008"
  | "bad-url"
  | "envelope-at-close";

/** One unmasked text frame, as a server sends it (short texts only). */
function textFrame(text: string): Buffer {
  const body = Buffer.from(text);
  return Buffer.concat([Buffer.from([0x81, body.length]), body]);
}

/** A Slack whose apps.connections.open answers, and whose socket then behaves as `behaviour`. */
async function oddSlack(
  behaviour: SocketBehaviour,
): Promise<{ apiUrl: string; opens: () => number; received: string[]; offers: string[] }> {
  let opens = 0;
  const received: string[] = [];
  const offers: string[] = [];
  const held: Duplex[] = [];
  const sockets = new WebSocketServer({ noServer: true });
  const server: Server = createServer((_req, res) => {
    opens += 1;
    const port = (server.address() as AddressInfo).port;
    const url =
      behaviour === "bad-url"
        ? "https://example.test/?ticket=SECRET"
        : `ws://127.0.0.1:${port}/socket?ticket=SECRET`;
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: true, url }));
  });
  server.on("upgrade", (req, duplex, head) => {
    offers.push(String(req.headers["sec-websocket-extensions"] ?? ""));
    if (behaviour === "no-upgrade") {
      held.push(duplex);
      return;
    }
    sockets.handleUpgrade(req, duplex, head, (ws) => {
      ws.on("message", (data) => received.push(String(data)));
      if (behaviour === "envelope-at-close") {
        // When the client's close frame arrives, an envelope is already on its way to it.
        duplex.prependListener("data", (chunk: Buffer) => {
          if (((chunk[0] ?? 0) & 0x0f) === 0x8)
            duplex.write(textFrame(JSON.stringify({ type: "events_api", envelope_id: "E1", payload: {} })));
        });
        ws.send(JSON.stringify({ type: "hello" }));
      }
      if (behaviour === "refuse-1008") ws.close(1008, "too many connections");
      if (behaviour === "drop-after-hello") {
        ws.send(JSON.stringify({ type: "hello" }));
        ws.terminate();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(async () => {
    for (const duplex of held) duplex.destroy();
    for (const ws of sockets.clients) ws.terminate();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return {
    apiUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`,
    opens: () => opens,
    received,
    offers,
  };
}

describe("SocketClient", () => {
  it("connects again when its thread dies, and when Slack asks it to", { timeout: 60_000 }, async () => {
    const fake = await startFakeSlack();
    cleanups.push(() => fake.close());
    const { client, states } = await connectedTo(fake);
    expect(states).toEqual(["connected"]);
    // A crash: the worker ends without being asked to.
    const thread = (client as unknown as { thread: { worker: Worker } }).thread;
    await thread.worker.terminate();
    await expect.poll(() => states, { timeout: 30_000 }).toEqual(["connected", "reconnecting", "connected"]);
    expect(fake.socket.connections).toBe(2);
    fake.socket.requestReconnect();
    await expect
      .poll(() => states, { timeout: 30_000 })
      .toEqual(["connected", "reconnecting", "connected", "reconnecting", "connected"]);
    expect(fake.socket.connections).toBe(3);
    expect(fake.socket.open).toBe(1);
  });

  for (const [cause, breakIt] of [
    ["unreachable", (fake: FakeSlack) => fake.state.dropNext("apps.connections.open", 2)],
    [
      "answering with an error (not about the token)",
      (fake: FakeSlack) => fake.state.fail("apps.connections.open", "internal_error"),
    ],
  ] as const)
    it(`connects again after Slack was ${cause}`, { timeout: 60_000 }, async () => {
      const fake = await startFakeSlack();
      cleanups.push(() => fake.close());
      const { states } = await connectedTo(fake);
      breakIt(fake);
      fake.socket.requestReconnect();
      await expect
        .poll(() => states, { timeout: 30_000 })
        .toEqual(["connected", "reconnecting", "connected"]);
      expect(fake.state.callsOf("apps.connections.open").length).toBeGreaterThanOrEqual(3);
    });

  it("asks apps.connections.open once per attempt, at start and in its reconnect loop", {
    timeout: 60_000,
  }, async () => {
    const fake = await startFakeSlack();
    cleanups.push(() => fake.close());
    const opens = () => fake.state.callsOf("apps.connections.open").length;
    // How many calls were made when each of the loop's attempts was logged as failed.
    const opensAtFailure: number[] = [];
    const logger = pino(
      { level: "warn" },
      {
        write: (line: string) => {
          if (JSON.parse(line).msg === "slack socket mode could not connect again")
            opensAtFailure.push(opens());
        },
      },
    );
    const client = clientFor(fake.apiUrl, fake.state.appToken, undefined, undefined, logger);
    const states: string[] = [];
    client.on("connected", () => states.push("connected"));
    // A dropped call fails the first start (its caller retries it), not a retry of its own.
    fake.state.dropNext("apps.connections.open", 1);
    await expect(client.start()).rejects.toThrow();
    expect(opens()).toBe(1);
    await client.start();
    fake.state.dropNext("apps.connections.open", 2);
    fake.socket.requestReconnect();
    await expect.poll(() => states, { timeout: 30_000 }).toEqual(["connected", "connected"]);
    expect(opensAtFailure).toEqual([3, 4]);
    expect(opens()).toBe(5);
  });

  it("counts an error Slack answers with at start as one start-up retries, and a refused token as one it does not", async () => {
    const fake = await startFakeSlack();
    cleanups.push(() => fake.close());
    fake.state.fail("apps.connections.open", "internal_error", "invalid_auth");
    const client = clientFor(fake.apiUrl, fake.state.appToken);
    const failures = [];
    for (let i = 0; i < 2; i++)
      failures.push(socketModeFailure(await client.start().catch((e: unknown) => e)));
    expect(failures.map((f) => [f.kind, f.retryable])).toEqual([
      ["unreachable", true],
      ["rejected", false],
    ]);
    await client.start();
  });

  it("stops, ending its thread, when the token is refused", { timeout: 60_000 }, async () => {
    const { fake, client } = await givenUp();
    expect(fake.socket.open).toBe(0);
    expect((client as unknown as { thread?: unknown }).thread).toBeUndefined();
  });

  it("goes on with its own retries when the readiness watchdog's try fails during a pause", async () => {
    const fake = await startFakeSlack();
    cleanups.push(() => fake.close());
    const { client, states } = await connectedTo(fake);
    fake.state.fail("apps.connections.open", "internal_error", "internal_error");
    fake.socket.requestReconnect();
    await expect.poll(() => fake.state.callsOf("apps.connections.open").length, { timeout: 30_000 }).toBe(2);
    // During the pause after the loop's failed try, the watchdog tries on its own, and fails too.
    await expect(client.start()).rejects.toThrow(/internal_error/);
    await expect.poll(() => states, { timeout: 30_000 }).toEqual(["connected", "reconnecting", "connected"]);
  }, 60_000);

  it("connects again after a drop that follows a watchdog's successful try during a pause", {
    timeout: 60_000,
  }, async () => {
    const fake = await startFakeSlack();
    cleanups.push(() => fake.close());
    const { client, states } = await connectedTo(fake);
    fake.state.fail("apps.connections.open", "internal_error");
    fake.socket.requestReconnect();
    await expect.poll(() => fake.state.callsOf("apps.connections.open").length, { timeout: 30_000 }).toBe(2);
    // During the loop's pause the watchdog tries, and connects; then the connection drops.
    await client.start();
    fake.socket.requestReconnect();
    await expect
      .poll(() => states, { timeout: 30_000 })
      .toEqual(["connected", "reconnecting", "connected", "reconnecting", "connected"]);
    expect(fake.socket.open).toBe(1);
  });

  it("goes back to its own retries when the watchdog's try after giving up fails for a reason retrying can mend", {
    timeout: 60_000,
  }, async () => {
    const { fake, client, states } = await givenUp();
    fake.state.fail("apps.connections.open", "internal_error");
    await expect(client.start()).rejects.toThrow(/internal_error/);
    await expect
      .poll(() => states, { timeout: 30_000 })
      .toEqual(["connected", "reconnecting", "disconnected", "reconnecting", "connected"]);
  });

  it("still hands on an event its thread acked, arriving as it stops (Slack will not send it again)", async () => {
    const slack = await startFakeSlackThread();
    cleanups.push(() => slack.close());
    const frames: boolean[] = [];
    const client = clientFor(slack.address.apiUrl, slack.address.state.appToken, undefined, (_text, acked) =>
      frames.push(acked),
    );
    await client.start();
    const acked = slack.pushDm("acked just before shutdown");
    // The main thread is busy while the thread acks; the frame waits in the port until stop began.
    expect(Atomics.wait(acked, 0, 0, 10_000)).not.toBe("timed-out");
    await client.stop();
    await new Promise((resolve) => setImmediate(resolve));
    expect(frames).toEqual([true]);
  });

  it("neither hands on nor acks an envelope that arrives while it stops", async () => {
    const slack = await oddSlack("envelope-at-close");
    const frames: string[] = [];
    const client = clientFor(slack.apiUrl, "xapp-1", undefined, (text) => frames.push(text));
    await client.start();
    await client.stop();
    expect(frames).toEqual([]);
    expect(slack.received).toEqual([]);
    // Nor does it offer compression (a zlib context per connection, for frames of a few KB).
    expect(slack.offers).toEqual([""]);
  });

  it("gives up an attempt that never gets Slack's hello, whether the upgrade or the hello is missing", async () => {
    for (const behaviour of ["no-upgrade", "no-hello"] as const) {
      const slack = await oddSlack(behaviour);
      const client = clientFor(slack.apiUrl, "xapp-1", { ping: 100, server: 300 });
      await expect(client.start()).rejects.toThrow(/before Slack said hello/);
      await expect(client.start()).rejects.toThrow(/before Slack said hello/);
      expect(slack.opens()).toBe(2);
    }
  });

  it("waits out a rate limit's Retry-After before asking for a connection again", {
    timeout: 30_000,
  }, async () => {
    const fake = await startFakeSlack();
    cleanups.push(() => fake.close());
    const { states } = await connectedTo(fake);
    fake.state.rateLimit("apps.connections.open", 1, 30);
    fake.socket.requestReconnect();
    await expect.poll(() => fake.state.callsOf("apps.connections.open").length, { timeout: 5_000 }).toBe(2);
    // Without the 30 s asked for, the next ask would come after the backoff's 4 s.
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    expect(fake.state.callsOf("apps.connections.open")).toHaveLength(2);
    expect(states).toEqual(["connected", "reconnecting"]);
  });

  it("makes a connection that keeps dropping right after hello again ever more slowly", {
    timeout: 60_000,
  }, async () => {
    const slack = await oddSlack("drop-after-hello");
    const client = clientFor(slack.apiUrl, "xapp-1");
    await client.start();
    // Pauses of 2 and 4 s: at most two more tries in 6 s (a pause that never grew: five).
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    expect(slack.opens()).toBeLessThanOrEqual(3);
    await expect.poll(() => slack.opens(), { timeout: 30_000 }).toBeGreaterThanOrEqual(2);
  });

  it("says why Slack closed the connection, and refuses a URL that is not a WebSocket's without quoting it", async () => {
    const refused = await oddSlack("refuse-1008");
    await expect(clientFor(refused.apiUrl, "xapp-1").start()).rejects.toThrow(/1008: too many connections/);
    const odd = await oddSlack("bad-url");
    const error: Error = await clientFor(odd.apiUrl, "xapp-1")
      .start()
      .then(
        () => new Error("connected"),
        (failure: Error) => failure,
      );
    expect(error.message).toMatch(/without a WebSocket URL/);
    expect(error.message).not.toMatch(/SECRET/);
  });
});
