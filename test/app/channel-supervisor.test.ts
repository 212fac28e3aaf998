/** ChannelSupervisor: background connection with classified, bounded, visible retries. */
import { describe, expect, it } from "vitest";
import type { RunningChannel } from "../../src/app/app-parts.js";
import { ChannelSupervisor } from "../../src/app/channel-supervisor.js";
import { ServiceFailure } from "../../src/core/failure.js";

const channel = (connected: () => boolean): RunningChannel => ({
  description: "fake",
  connected,
  stopIntake: () => undefined,
  close: async () => undefined,
});

const unreachable = () => new ServiceFailure("Fake", "unreachable", "ECONNREFUSED", "start it");

async function until(test: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await test())) await new Promise((resolve) => setImmediate(resolve));
}

describe("ChannelSupervisor", () => {
  it("settles its first attempt when it fails (retries go on) and when it connects", async () => {
    let attempts = 0;
    let connectNow: () => void = () => undefined;
    const supervisor = new ChannelSupervisor({
      platform: "fake",
      connect: async () => {
        attempts++;
        if (attempts === 1) throw unreachable();
        await new Promise<void>((resolve) => {
          connectNow = resolve;
        });
        return channel(() => true);
      },
      warn: () => undefined,
      attemptMs: 10_000,
      backoff: { initialMs: 1, maxMs: 1 },
    });
    let settled = false;
    void supervisor.firstAttempt.then(() => {
      settled = true;
    });
    supervisor.start();
    await until(() => settled);
    expect((await supervisor.status()).state).toBe("retrying");

    const connected = new ChannelSupervisor({
      platform: "fake",
      connect: async () => channel(() => true),
      warn: () => undefined,
      attemptMs: 10_000,
      backoff: { initialMs: 1, maxMs: 1 },
    });
    connected.start();
    await connected.firstAttempt;
    expect((await connected.status()).state).toBe("up");
    await until(() => attempts === 2);
    connectNow();
    await until(async () => (await supervisor.status()).state === "up");
  });

  it("retries an unreachable platform, warning on attempts 1, 2, 4, 8, and comes up", async () => {
    const warnings: string[] = [];
    let attempts = 0;
    const supervisor = new ChannelSupervisor({
      platform: "fake",
      connect: async () => {
        attempts++;
        if (attempts < 10) throw unreachable();
        return channel(() => true);
      },
      warn: (line) => warnings.push(line),
      attemptMs: 10_000,
      backoff: { initialMs: 1, maxMs: 2 },
    });
    supervisor.start();
    await until(async () => (await supervisor.status()).state === "up");
    expect(attempts).toBe(10);
    expect(warnings.map((line) => /attempt (\d+)/.exec(line)?.[1])).toEqual(["1", "2", "4", "8"]);
    expect(warnings[0]).toBe(
      "! Fake is unreachable: ECONNREFUSED — fix: start it (attempt 1; next try in 1 ms)",
    );
    expect(await supervisor.downForMs()).toBe(0);
  });

  it("does not retry a rejected token; reports it and counts the time down for /healthz", async () => {
    const warnings: string[] = [];
    let now = 1_000;
    let attempts = 0;
    const supervisor = new ChannelSupervisor({
      platform: "fake",
      connect: async () => {
        attempts++;
        throw new ServiceFailure("Fake", "rejected", "invalid_auth", "new token");
      },
      warn: (line) => warnings.push(line),
      attemptMs: 10_000,
      backoff: { initialMs: 1, maxMs: 1 },
      now: () => now,
    });
    supervisor.start();
    await until(async () => (await supervisor.status()).state === "failed");
    expect(await supervisor.status()).toEqual({
      state: "failed",
      reason: "Fake rejected the credentials: invalid_auth — fix: new token",
    });
    now += 301_000;
    expect(await supervisor.downForMs()).toBe(301_000);
    expect(attempts).toBe(1);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("not retrying");
  });

  it("reports a dropped connection as down, and stopIntake ends the retries", async () => {
    let connected = true;
    const up = new ChannelSupervisor({
      platform: "fake",
      connect: async () => channel(() => connected),
      warn: () => undefined,
      attemptMs: 10_000,
      backoff: { initialMs: 1, maxMs: 1 },
    });
    up.start();
    await until(async () => (await up.status()).state === "up");
    connected = false;
    expect((await up.status()).state).toBe("down");

    let attempts = 0;
    const retrying = new ChannelSupervisor({
      platform: "fake",
      connect: async () => {
        attempts++;
        throw unreachable();
      },
      warn: () => undefined,
      attemptMs: 10_000,
      backoff: { initialMs: 1, maxMs: 1 },
    });
    retrying.start();
    await until(() => attempts >= 2);
    await retrying.stopIntake();
    const stoppedAt = attempts;
    await new Promise((resolve) => setImmediate(resolve));
    expect((await retrying.status()).state).toBe("stopped");
    expect(attempts).toBeLessThanOrEqual(stoppedAt + 1);
  });
  it("aborts an attempt that outlives its deadline, so the channel stops its own retrying", async () => {
    const signals: AbortSignal[] = [];
    const warnings: string[] = [];
    const supervisor = new ChannelSupervisor({
      platform: "fake",
      connect: (signal) => {
        signals.push(signal);
        return signals.length === 1
          ? new Promise<RunningChannel>(() => undefined)
          : Promise.resolve(channel(() => true));
      },
      warn: (line) => warnings.push(line),
      attemptMs: 20,
      backoff: { initialMs: 1, maxMs: 1 },
    });
    supervisor.start();
    await until(async () => (await supervisor.status()).state === "up");
    expect(signals[0]?.aborted).toBe(true);
    expect(signals[1]?.aborted).toBe(false);
    expect(warnings[0]).toContain("fake is unreachable: no connection within 20 ms");
  });
  it("starts the next attempt only once an aborted one has stopped what it began", async () => {
    const events: string[] = [];
    let attempts = 0;
    const supervisor = new ChannelSupervisor({
      platform: "fake",
      connect: (signal) => {
        attempts++;
        events.push(`start ${attempts}`);
        if (attempts > 1) return Promise.resolve(channel(() => true));
        // Like startOrStop: an abandoned attempt rejects once its (slow) stop has finished.
        return new Promise<RunningChannel>((_resolve, reject) => {
          signal.addEventListener("abort", () => {
            setTimeout(() => {
              events.push("stopped 1");
              reject(signal.reason);
            }, 10);
          });
        });
      },
      warn: (line) => events.push(line),
      attemptMs: 20,
      backoff: { initialMs: 1, maxMs: 1 },
    });
    supervisor.start();
    await until(async () => (await supervisor.status()).state === "up");
    expect(events).toEqual([
      "start 1",
      "stopped 1",
      expect.stringContaining("no connection within 20 ms"),
      "start 2",
    ]);
  });
});
