/**
 * The Socket Mode connection's own thread: an event is acknowledged while the main thread's event
 * loop is blocked (Slack, in a thread of its own here, sees the ack; the envelope reaches Bolt
 * once the loop runs again), and a thread that dies is reported disconnected and started again.
 */
import { App } from "@slack/bolt";
import { afterEach, describe, expect, it } from "vitest";
import type { Worker } from "node:worker_threads";
import { IntakeLog } from "../../../src/channels/intake-log.js";
import { SocketReceiver } from "../../../src/channels/slack/slack-socket-receiver.js";
import { SocketThread } from "../../../src/channels/slack/slack-socket-thread.js";
import { type FakeSlackThread, startFakeSlackThread } from "../../fakes/fake-slack/in-thread.js";
import { startFakeSlack, type FakeSlack } from "../../fakes/fake-slack/index.js";
import { silentLogger } from "./support.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

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

  it("reports a thread that died as disconnected and starts it again", async () => {
    const fake: FakeSlack = await startFakeSlack();
    cleanups.push(() => fake.close());
    const states: string[] = [];
    const thread = new SocketThread(
      {
        appToken: fake.state.appToken,
        slackApiUrl: fake.apiUrl,
        clientPingTimeoutMs: 5_000,
        serverPingTimeoutMs: 30_000,
        logLevel: "error",
      },
      { frame() {}, refused() {}, log() {} },
    );
    for (const state of ["connected", "disconnected"]) thread.on(state, () => states.push(state));
    cleanups.push(() => thread.stop());
    await thread.start();
    expect(states).toEqual(["connected"]);
    // A crash: the worker ends without being asked to.
    await (thread as unknown as { worker: Worker }).worker.terminate();
    await expect.poll(() => states, { timeout: 10_000 }).toEqual(["connected", "disconnected", "connected"]);
  });
});
