/**
 * The Socket Mode connection's own thread: an event is acknowledged while the main thread's event
 * loop is blocked (Slack, in a thread of its own here, sees the ack; the envelope reaches Bolt
 * once the loop runs again); the client connects again when its thread dies, when Slack asks it
 * to and after Slack was unreachable, and stops when its token is refused.
 */
import { App } from "@slack/bolt";
import { afterEach, describe, expect, it } from "vitest";
import type { Worker } from "node:worker_threads";
import { IntakeLog } from "../../../src/channels/intake-log.js";
import { SocketReceiver } from "../../../src/channels/slack/slack-socket-receiver.js";
import { SocketClient } from "../../../src/channels/slack/slack-socket-client.js";
import { type FakeSlackThread, startFakeSlackThread } from "../../fakes/fake-slack/in-thread.js";
import { startFakeSlack, type FakeSlack } from "../../fakes/fake-slack/index.js";
import { silentLogger } from "./support.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A SocketClient on `fake` that drops what it receives. */
function clientOn(fake: FakeSlack): SocketClient {
  return new SocketClient(
    {
      appToken: fake.state.appToken,
      slackApiUrl: fake.apiUrl,
      logger: silentLogger,
      clientPingTimeoutMs: 5_000,
      serverPingTimeoutMs: 30_000,
    },
    { frame() {}, refused() {} },
  );
}

describe("the Socket Mode thread", () => {
  it("acknowledges an event while the main thread's event loop is blocked, and Bolt gets it afterwards", async () => {
    const slack: FakeSlackThread = await startFakeSlackThread();
    cleanups.push(() => slack.close());
    const { apiUrl, state } = slack.address;
    const receiver = new SocketReceiver({
      appToken: state.appToken,
      slackApiUrl: apiUrl,
      logger: silentLogger,
    });
    const bolt = receiver.open({
      screenFor: () => () => ({ pass: true, body: "event_callback" }),
      log: new IntakeLog(silentLogger),
      processEventErrorHandler: async () => true,
    });
    const app = new App({
      receiver: bolt,
      authorize: async () => ({ botToken: state.botToken, botUserId: state.botUserId, teamId: "T0FAKE" }),
      clientOptions: { slackApiUrl: apiUrl },
      logger: {
        debug() {},
        info() {},
        warn() {},
        error() {},
        setLevel() {},
        getLevel: () => "error" as never,
        setName() {},
      },
    });
    const seen: string[] = [];
    app.event("message", async ({ event }) => {
      seen.push((event as { text?: string }).text ?? "");
    });
    await receiver.listen(app);
    cleanups.push(async () => {
      receiver.close();
      await app.stop();
    });

    const acked = slack.pushDm("while you were busy");
    // The main thread stops here: nothing on its event loop runs until the wait ends.
    const waited = Atomics.wait(acked, 0, 0, 10_000);
    expect(waited).not.toBe("timed-out");
    expect(seen).toEqual([]);
    await expect.poll(() => seen).toEqual(["while you were busy"]);
  });

  it("connects again when its thread dies, and when Slack asks it to", async () => {
    const fake: FakeSlack = await startFakeSlack();
    cleanups.push(() => fake.close());
    const states: string[] = [];
    const client = clientOn(fake);
    for (const state of ["connected", "reconnecting"]) client.on(state, () => states.push(state));
    cleanups.push(() => client.stop());
    await client.start();
    expect(states).toEqual(["connected"]);
    // A crash: the worker ends without being asked to.
    const thread = (client as unknown as { thread: { worker: Worker } }).thread;
    await thread.worker.terminate();
    await expect.poll(() => states, { timeout: 10_000 }).toEqual(["connected", "reconnecting", "connected"]);
    expect(fake.socket.connections).toBe(2);
    fake.socket.requestReconnect();
    await expect
      .poll(() => states, { timeout: 10_000 })
      .toEqual(["connected", "reconnecting", "connected", "reconnecting", "connected"]);
    expect(fake.socket.connections).toBe(3);
    expect(fake.socket.open).toBe(1);
  });

  it("retries a connection Slack cannot give yet, and stops when the token is refused", async () => {
    const fake: FakeSlack = await startFakeSlack();
    cleanups.push(() => fake.close());
    const states: string[] = [];
    const client = clientOn(fake);
    for (const state of ["connected", "reconnecting", "disconnected"])
      client.on(state, () => states.push(state));
    cleanups.push(() => client.stop());
    await client.start();
    // Unreachable for longer than one call's own retries: the client tries again after a pause.
    fake.state.dropNext("apps.connections.open", 3);
    fake.socket.requestReconnect();
    await expect.poll(() => states, { timeout: 10_000 }).toEqual(["connected", "reconnecting", "connected"]);
    // A revoked token: retrying cannot help, so the client stops (SocketHealth's watchdog takes over).
    fake.state.fail("apps.connections.open", "token_revoked");
    fake.socket.requestReconnect();
    await expect
      .poll(() => states, { timeout: 10_000 })
      .toEqual(["connected", "reconnecting", "connected", "reconnecting", "disconnected"]);
    expect(fake.socket.open).toBe(0);
  });
});
