/**
 * One error on the Redis store's connection is one log report: the store's keyv spaces (one per
 * namespace) share that connection, and each adapter passes the client's errors on, but only the
 * client's own listener reports them. On a real redis-server, Redis closing the store's connection
 * (CLIENT KILL) is logged once, and the store reconnects.
 */
import os from "node:os";
import { createClient } from "@keyv/redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/logging/logger.js";
import { createStore } from "../../src/store/create-store.js";
import { eventually } from "../support/eventually.js";
import { type RedisServer, startRedisServer } from "../support/redis-server.js";

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedisServer();
}, 20_000);
afterAll(async () => {
  await redis.stop();
});

describe("an error on the Redis store's connection", () => {
  it("is logged once, not once per namespace", async () => {
    const lines: string[] = [];
    const logger = createLogger({
      level: "info",
      destination: { write: (line: string) => void lines.push(line) },
      pretty: false,
    });
    const store = await createStore({
      url: redis.url,
      dataDir: os.tmpdir(),
      onError: (error) => logger.warn({ err: error }, "store error"),
    });
    const observer = createClient({ url: redis.url });
    await observer.connect();
    try {
      await store.space("sessions").set("s1", { ok: true });
      // Redis closes every connection but the observer's: the store's one connection.
      await observer.sendCommand(["CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"]);
      await eventually(async () => (await store.ping()).ok, "the store to reconnect", 10_000);
      expect(await store.space("sessions").get("s1")).toEqual({ ok: true });
      // Give any copies passed on by the adapters time to arrive.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const reports = lines.filter((line) => line.includes('"msg":"store error"'));
      expect(reports).toHaveLength(1);
      expect(reports[0]).toContain("Socket closed unexpectedly");
    } finally {
      await observer.close();
      await store.close();
    }
  }, 20_000);
});
