/**
 * The Socket Mode connection's own thread: an event is acknowledged while the main thread's event
 * loop is blocked (Slack, in a thread of its own here, sees the ack; the envelope reaches Bolt
 * once the loop runs again); but once the main thread has given no sign of life for longer than
 * allowed, events are left unacknowledged until it reads them, so Slack would redeliver them; and
 * while a thousand messages wait for a main thread that is alive but behind, further events are
 * neither acknowledged nor passed on (Slack redelivers them) until it has taken the backlog in.
 */
import { App } from "@slack/bolt";
import pino, { type Logger } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { IntakeLog } from "../../../src/channels/intake-log.js";
import { SocketReceiver } from "../../../src/channels/slack/slack-socket-receiver.js";
import { type FakeSlackThread, startFakeSlackThread } from "../../fakes/fake-slack/in-thread.js";
import { silentLogger } from "./support.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A Bolt app on a SocketReceiver on `slack`, recording the text of each message event. */
async function boltOn(
  slack: FakeSlackThread,
  mainSilenceMs?: number,
  logger = silentLogger,
): Promise<string[]> {
  const { apiUrl, state } = slack.address;
  const receiver = new SocketReceiver({
    appToken: state.appToken,
    slackApiUrl: apiUrl,
    logger,
    ...(mainSilenceMs === undefined ? {} : { mainSilenceMs }),
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
  return seen;
}

describe("the Socket Mode thread", () => {
  it("acknowledges an event while the main thread's event loop is blocked, and Bolt gets it afterwards", async () => {
    const slack = await startFakeSlackThread();
    cleanups.push(() => slack.close());
    const seen = await boltOn(slack);

    const acked = slack.pushDm("while you were busy");
    // The main thread stops here: nothing on its event loop runs until the wait ends.
    const waited = Atomics.wait(acked, 0, 0, 10_000);
    expect(waited).not.toBe("timed-out");
    expect(seen).toEqual([]);
    await expect.poll(() => seen, { timeout: 10_000 }).toEqual(["while you were busy"]);
  });

  it("leaves events unacknowledged while the main thread is stuck, and acks each once it is read", async () => {
    const slack = await startFakeSlackThread();
    cleanups.push(() => slack.close());
    const seen = await boltOn(slack, 200);
    // Heartbeats reach the thread first (one every 50 ms), as they do in a running process.
    await new Promise((resolve) => setTimeout(resolve, 300));

    // The event comes 600 ms into a stall of the main thread, three times the silence allowed.
    const acked = slack.pushDm("while you were stuck", 600);
    expect(Atomics.wait(acked, 0, 0, 1_500)).toBe("timed-out");
    expect(seen).toEqual([]);
    await expect.poll(() => seen, { timeout: 10_000 }).toEqual(["while you were stuck"]);
    await expect.poll(() => Atomics.load(acked, 0), { timeout: 10_000 }).toBe(1);
  });

  it("holds back events while a thousand messages wait for a main thread that is alive but behind, and acks again once it took them in", async () => {
    const slack = await startFakeSlackThread();
    cleanups.push(() => slack.close());
    const lines: string[] = [];
    const logger: Logger = pino({ level: "info" }, { write: (line: string) => lines.push(line) });
    // Silence is allowed for a minute: a main thread stopped for less still counts as alive.
    const seen = await boltOn(slack, 60_000, logger);
    // The beat telling the thread that hello's message was taken in has been sent.
    await new Promise((resolve) => setImmediate(resolve));

    // The main thread stops here, taking nothing in: the first thousand events are acked and wait for it.
    const burst = Array.from({ length: 1_000 }, (_, i) => `burst ${i}`);
    const burstAcks = burst.map((text) => slack.pushDm(text));
    const held = ["held 1", "held 2", "held 3"].map((text) => slack.pushDm(text));
    for (const acked of burstAcks) expect(Atomics.wait(acked, 0, 0, 10_000)).not.toBe("timed-out");
    expect(seen).toEqual([]);

    // Running again, it takes the thousand in; the next event is acked and handed on.
    await expect.poll(() => seen.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(1_000);
    const after = slack.pushDm("after the backlog");
    await expect.poll(() => Atomics.load(after, 0), { timeout: 10_000 }).toBe(1);
    // Acks reach the fake in the order sent on the one connection: one for a held event would be in by now.
    expect(held.map((acked) => Atomics.load(acked, 0))).toEqual([0, 0, 0]);
    await expect.poll(() => seen.length, { timeout: 10_000 }).toBe(1_001);
    expect(seen).toEqual([...burst, "after the backlog"]);
    const said = (text: string) => lines.filter((line) => line.includes(text)).length;
    expect([said("wait for the main thread"), said("the main thread caught up")]).toEqual([1, 1]);
  });
});
