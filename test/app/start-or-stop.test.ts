/**
 * startOrStop: a failed start is the channel's own to undo (stopped once, by the channel), and an
 * abandoned attempt settles only after its stop has finished.
 */
import { describe, expect, it } from "vitest";
import { startOrStop } from "../../src/app/start-or-stop.js";
import { deferred } from "../support/deferred.js";

/**
 * A channel as SlackChannel is: its start first identifies itself (nothing to stop yet), then
 * connects; a start that fails stops the channel itself, and a stop of a channel with nothing
 * running returns at once.
 */
class FakeChannel {
  readonly steps: string[] = [];
  /** Settles the identification (auth.test) that comes before anything runs. */
  readonly identified = deferred();
  /** Settles the connection under way. */
  readonly connecting = deferred();
  /** Settles a stop under way (a stop waits for it when `slowStop`). */
  readonly stopping = deferred();
  slowStop = false;
  private running = false;

  constructor(identifiedAtOnce = true) {
    if (identifiedAtOnce) this.identified.resolve();
  }

  async start(): Promise<void> {
    this.steps.push("start");
    await this.identified.promise;
    this.running = true;
    try {
      await this.connecting.promise;
    } catch (error) {
      await this.stop();
      throw error;
    }
    this.steps.push("connected");
  }

  async stop(): Promise<void> {
    this.steps.push("stop");
    if (!this.running) return;
    this.running = false;
    // A connection waiting for Slack's hello fails when stopped.
    this.connecting.reject(new Error("stopped while connecting"));
    if (this.slowStop) await this.stopping.promise;
    this.steps.push("stopped");
  }
}

/** Whether `promise` has settled by now (after pending callbacks ran). */
async function settledYet(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

describe("startOrStop", () => {
  it("leaves a failed start to the channel: it is stopped exactly once", async () => {
    const channel = new FakeChannel();
    const attempt = startOrStop(channel, new AbortController().signal);
    channel.connecting.reject(new Error("no connection"));
    await expect(attempt).rejects.toThrow("no connection");
    await new Promise((resolve) => setImmediate(resolve));
    expect(channel.steps.filter((step) => step === "stop")).toHaveLength(1);
  });

  it("stops nothing after a start that connected", async () => {
    const channel = new FakeChannel();
    const controller = new AbortController();
    const attempt = startOrStop(channel, controller.signal);
    channel.connecting.resolve();
    await attempt;
    controller.abort();
    await new Promise((resolve) => setImmediate(resolve));
    expect(channel.steps).toEqual(["start", "connected"]);
  });

  it("settles an abandoned attempt only after its stop finished", async () => {
    const channel = new FakeChannel();
    channel.slowStop = true;
    const controller = new AbortController();
    const attempt = startOrStop(channel, controller.signal);
    await new Promise((resolve) => setImmediate(resolve));
    const reason = new Error("deadline");
    controller.abort(reason);
    // The stop cut the start short, and the channel's own undo found nothing left to stop; the
    // attempt still waits for the first stop.
    expect(await settledYet(attempt)).toBe(false);
    channel.stopping.resolve();
    await expect(attempt).rejects.toBe(reason);
    expect(channel.steps).toEqual(["start", "stop", "stop", "stopped"]);
  });

  it("stops a start that connects after the attempt was abandoned, before settling", async () => {
    const channel = new FakeChannel(false);
    const controller = new AbortController();
    const attempt = startOrStop(channel, controller.signal);
    controller.abort();
    expect(await settledYet(attempt)).toBe(false);
    channel.identified.resolve();
    channel.slowStop = true;
    channel.connecting.resolve();
    expect(await settledYet(attempt)).toBe(false);
    channel.stopping.resolve();
    await expect(attempt).rejects.toMatchObject({ name: "AbortError" });
    expect(channel.steps).toEqual(["start", "stop", "connected", "stop", "stopped"]);
  });

  it("starts nothing for an attempt abandoned already", async () => {
    const channel = new FakeChannel();
    const controller = new AbortController();
    controller.abort();
    await expect(startOrStop(channel, controller.signal)).rejects.toMatchObject({ name: "AbortError" });
    expect(channel.steps).toEqual([]);
  });
});
