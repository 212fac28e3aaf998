/**
 * Restarting a stalled command link leaves one connection behind, not two: on a real redis-server
 * behind a TCP proxy that stops forwarding for longer than two reply timeouts, the store's watch
 * drops its ready connection (unanswered PING) and then the new one stuck in its handshake. Once
 * the proxy forwards again, Redis sees exactly one connection from the store, and calls work.
 * (A restart that calls connect() while the attempt it dropped is still winding down leaves
 * node-redis running two connect loops, each with a socket of its own.)
 */
import os from "node:os";
import { createClient } from "@keyv/redis";
import { describe, expect, it } from "vitest";
import { REPLY_TIMEOUT_MS } from "../../src/store/backends/backend.js";
import { createStore } from "../../src/store/create-store.js";
import { eventually } from "../support/eventually.js";
import { stallableRedis } from "../support/stalled-redis.js";

const stalling = stallableRedis();

describe("restarting a stalled command link", () => {
  it("leaves exactly one connection once the link forwards again", async () => {
    const { proxy, url } = await stalling.proxied();
    const errors: unknown[] = [];
    const store = await createStore({ url, dataDir: os.tmpdir(), onError: (e) => errors.push(e) });
    // Direct to Redis: the only other client of this server.
    const observer = createClient({ url: stalling.server().url });
    await observer.connect();
    const observerId = String(await observer.sendCommand(["CLIENT", "ID"]));
    /** The store's connections as Redis counts them (everything but the observer). */
    const storeConnections = async () =>
      String(await observer.sendCommand(["CLIENT", "LIST"]))
        .split("\n")
        .filter((line) => line.startsWith("id=") && !line.startsWith(`id=${observerId} `)).length;
    try {
      await store.space("sessions").set("s1", { ok: true });
      expect(await storeConnections()).toBe(1);

      proxy.stall();
      // Two reply timeouts and a tick: the ready connection is dropped (its PING unanswered), then
      // the new one, stuck in its handshake, too. Awaited by the two reports rather than a fixed
      // 2.5 s of slack, which a loaded host's late timers can use up (the reports are checked below).
      await eventually(
        () => errors.length >= 2,
        "both connections to be dropped",
        2 * REPLY_TIMEOUT_MS + 10_000,
      );
      proxy.resume();
      await eventually(async () => (await store.ping()).ok, "the store to answer again", 10_000);
      expect(await store.space("sessions").get("s1")).toEqual({ ok: true });

      // The links dropped during the stall end once their FIN gets through the proxy; a second
      // live connection would stay (also one that comes a moment later: hence the wait after).
      await eventually(async () => (await storeConnections()) === 1, "the dropped links to end", 10_000);
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      expect(await storeConnections()).toBe(1);
      expect(await store.space("sessions").get("s1")).toEqual({ ok: true });
      // Both drops happened, the second in the handshake; the drops themselves report nothing else.
      expect(errors.map(String)).toEqual([
        `Error: Redis did not answer within ${REPLY_TIMEOUT_MS} ms: reconnecting`,
        `Error: Redis did not accept a new connection within ${REPLY_TIMEOUT_MS} ms: reconnecting`,
      ]);
    } finally {
      proxy.resume();
      await observer.close();
      await store.close();
    }
  }, 60_000);
});
