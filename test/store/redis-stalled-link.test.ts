/**
 * A link to Redis that stops answering without closing (no RST: a stalled network, a frozen host)
 * neither hangs the store's calls nor reads as healthy: on a real redis-server behind a TCP proxy
 * that stops forwarding, a store call and a coordination call fail within the reply timeout,
 * and the store's and the coordination's health pings report false within their deadline (so
 * /readyz fails), for as long as the link stays silent. Once the proxy forwards again, both
 * report healthy and calls work.
 */
import os from "node:os";
import { describe, expect, it } from "vitest";
import { Readiness } from "../../src/ops/readiness.js";
import { createCoordination } from "../../src/store/coordination/create-coordination.js";
import { PING_TIMEOUT_MS, REPLY_TIMEOUT_MS } from "../../src/store/backends/backend.js";
import { createStore } from "../../src/store/create-store.js";
import { eventually } from "../support/eventually.js";
import { stallableRedis } from "../support/stalled-redis.js";

/** How long `work` took to settle, and how (never throws). */
async function timed(work: () => Promise<unknown>): Promise<{ ms: number; outcome: unknown }> {
  const start = Date.now();
  const outcome = await work().then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  return { ms: Date.now() - start, outcome };
}

const stalling = stallableRedis();

describe("a stalled link to Redis", () => {
  it("fails calls within the reply timeout, turns health false, and recovers when the link does", async () => {
    const { proxy, url } = await stalling.proxied();
    const errors: unknown[] = [];
    const store = await createStore({ url, dataDir: os.tmpdir(), onError: (e) => errors.push(e) });
    const warnings: string[] = [];
    const coordination = await createCoordination({
      url,
      dataDir: os.tmpdir(),
      store,
      onWarn: (message) => warnings.push(message),
    });
    const readiness = new Readiness();
    readiness.register("store", () => store.ping());
    readiness.register("coordination", () => coordination.ping());
    try {
      await store.space("sessions").set("s1", { ok: true });
      expect((await readiness.evaluate()).ready).toBe(true);

      proxy.stall();
      const [get, claim, storePing, coordinationPing, report] = await Promise.all([
        timed(() => store.space("sessions").get("s1")),
        timed(() => coordination.claimOnce("wake:1", 60_000)),
        timed(() => store.ping()),
        timed(() => coordination.ping()),
        readiness.evaluate(),
      ]);
      // The calls fail (they do not hang), once the link has been silent for the reply timeout.
      // The upper bound is twice that: 2 s of slack was met exactly on a loaded host (7,000 ms).
      for (const call of [get, claim]) {
        expect(call.outcome).toEqual({ error: expect.any(Error) });
        expect(call.ms).toBeGreaterThanOrEqual(REPLY_TIMEOUT_MS - 1_000);
        expect(call.ms).toBeLessThan(REPLY_TIMEOUT_MS * 2);
      }
      // Health says no within its own deadline, and /readyz is not ready. The bound is twice the
      // deadline, as above: 500 ms of slack is less than a loaded host delays a timer.
      for (const ping of [storePing, coordinationPing]) {
        expect(ping.outcome).toEqual({ value: { ok: false, detail: expect.any(String) } });
        expect(ping.ms).toBeLessThan(PING_TIMEOUT_MS * 2);
      }
      expect(report.ready).toBe(false);
      expect(report.checks.map((check) => [check.name, check.ok])).toEqual([
        ["store", false],
        ["coordination", false],
      ]);

      // Still silent past another reply timeout (the new connection is not ready either): calls
      // keep failing without hanging, and health stays false.
      await new Promise((resolve) => setTimeout(resolve, REPLY_TIMEOUT_MS + 1_000));
      const later = await timed(() => store.space("sessions").get("s1"));
      expect(later.outcome).toEqual({ error: expect.any(Error) });
      expect(later.ms).toBeLessThan(REPLY_TIMEOUT_MS * 2);
      expect((await readiness.evaluate()).ready).toBe(false);

      proxy.resume();
      await eventually(async () => (await readiness.evaluate()).ready, "health to recover", 10_000);
      expect(await store.space("sessions").get("s1")).toEqual({ ok: true });
      expect(await coordination.claimOnce("wake:2", 60_000)).toBe(true);
      // The whole link was silent, heartbeats included: not the pub/sub connection's fault alone.
      expect(warnings).toEqual([]);
    } finally {
      proxy.resume();
      await coordination.close();
      await store.close();
    }
  }, 40_000);
});
