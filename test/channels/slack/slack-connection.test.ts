import { EventEmitter } from "node:events";
import { afterEach, describe, expect, it, vi } from "vitest";
import { SocketHealth } from "../../../src/channels/slack/slack-connection.js";
import { silentLogger } from "./support.js";

class FakeClient extends EventEmitter {
  starts = 0;
  async start(): Promise<void> {
    this.starts += 1;
    this.emit("connecting");
  }
}

afterEach(() => vi.useRealTimers());

describe("SocketHealth", () => {
  it("follows the client's lifecycle events", () => {
    const client = new FakeClient();
    const health = new SocketHealth(client, silentLogger, 60_000);
    expect(health.isReady()).toBe(false);
    client.emit("connected");
    expect(health.isReady()).toBe(true);
    client.emit("reconnecting");
    expect(health.isReady()).toBe(false);
    expect(health.current()).toBe("reconnecting");
    health.stop();
    client.emit("connected");
    expect(health.current()).toBe("reconnecting");
  });

  it("starts a client again that stopped making progress while disconnected", async () => {
    vi.useFakeTimers();
    const client = new FakeClient();
    const health = new SocketHealth(client, silentLogger, 1_000);
    health.watch();
    client.emit("connected");
    client.emit("reconnecting");
    await vi.advanceTimersByTimeAsync(900);
    expect(client.starts).toBe(0);
    await vi.advanceTimersByTimeAsync(700);
    expect(client.starts).toBe(1);
    client.emit("connected");
    await vi.advanceTimersByTimeAsync(5_000);
    expect(client.starts).toBe(1);
    health.stop();
  });
});
