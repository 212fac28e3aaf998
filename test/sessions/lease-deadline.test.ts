/**
 * A held session lease is given up by the holder's own clock when no renewal confirmed it within
 * the TTL (less a margin), whatever the renewal calls do: one that never settles — a silent link
 * to Redis neither answers nor fails — still ends in onLost and an aborted signal, before the
 * lease can lapse in the store and another process take the session. Renewals that succeed keep
 * the lease. The last case runs on a real redis-server behind a TCP proxy that goes silent.
 */
import net from "node:net";
import pino from "pino";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { type LeaseTiming, lossMarginMs, SessionLeases } from "../../src/sessions/lease-lock.js";
import type { Coordination } from "../../src/store/coordination/coordination.js";
import { openRedisCoordination } from "../../src/store/coordination/redis-coordination.js";
import { eventually } from "../support/eventually.js";
import { type RedisServer, startRedisServer } from "../support/redis-server.js";

const silent = pino({ level: "silent" });

/** A coordination whose lease calls answer as `renew` says (acquire always grants). */
function fakeCoordination(renew: () => Promise<boolean>): Coordination {
  let fence = 0;
  return {
    acquire: async (_key: string, _ttl: number, owner?: string) => ({
      token: `${owner}/t${++fence}`,
      fence,
    }),
    renew,
    release: async () => true,
    holder: async () => undefined,
  } as unknown as Coordination;
}

describe("session lease deadline (fake clock)", () => {
  const timing: LeaseTiming = { ttlMs: 3_000, renewMs: 1_000 };

  /** Process A's leases over a coordination whose renewals answer as `renew` does; what it lost. */
  function leasesOver(renew: () => Promise<boolean>) {
    const lost: string[] = [];
    const leases = new SessionLeases({
      coordination: fakeCoordination(renew),
      processId: "A",
      timing,
      logger: silent,
      onLost: (id) => lost.push(id),
    });
    return { leases, lost };
  }

  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("loses a lease whose renewals never settle before its TTL runs out", async () => {
    const renew = vi.fn(() => new Promise<boolean>(() => {}));
    const { leases, lost } = leasesOver(renew);
    const held = await leases.take("s1");
    expect(held).toBeDefined();

    const deadline = timing.ttlMs - lossMarginMs(timing);
    expect(deadline).toBeLessThan(timing.ttlMs);
    await vi.advanceTimersByTimeAsync(deadline - 1);
    expect(renew).toHaveBeenCalled();
    expect(lost).toEqual([]);
    expect(held!.signal.aborted).toBe(false);

    await vi.advanceTimersByTimeAsync(1);
    expect(lost).toEqual(["s1"]);
    expect(held!.signal.aborted).toBe(true);
    expect(leases.holding("s1")).toBeUndefined();
    // The fence stays, so a late write of the lost turn is still fenced.
    expect(leases.fenceOf("s1")).toEqual(held!.fence);
  });

  it("keeps a lease whose renewals succeed, and loses it once they start to hang", async () => {
    let answer = true;
    const renew = vi.fn(() => (answer ? Promise.resolve(true) : new Promise<boolean>(() => {})));
    const { leases, lost } = leasesOver(renew);
    const held = await leases.take("s1");

    await vi.advanceTimersByTimeAsync(10 * timing.ttlMs);
    expect(lost).toEqual([]);
    expect(held!.signal.aborted).toBe(false);
    expect(leases.holding("s1")).toBe(held);

    // The last renewal that answered ran at 10 × TTL; the next ones hang.
    answer = false;
    await vi.advanceTimersByTimeAsync(timing.ttlMs - lossMarginMs(timing) - 1);
    expect(lost).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(lost).toEqual(["s1"]);
    expect(held!.signal.aborted).toBe(true);
  });

  it("stops the deadline when the lease is released", async () => {
    const lost: string[] = [];
    const leases = new SessionLeases({
      coordination: fakeCoordination(() => new Promise<boolean>(() => {})),
      processId: "A",
      timing,
      logger: silent,
      onLost: (id) => lost.push(id),
    });
    const held = await leases.take("s1");
    await held!.release();
    await vi.advanceTimersByTimeAsync(2 * timing.ttlMs);
    expect(lost).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("session lease deadline (real Redis, silent link)", () => {
  let redis: RedisServer;
  let proxy: net.Server;
  let stalled = false;
  const sockets = new Set<net.Socket>();

  beforeAll(async () => {
    redis = await startRedisServer();
    // Forwards to redis-server until `stalled`; then swallows every byte, closing nothing.
    proxy = net.createServer((client) => {
      const upstream = net.connect(redis.port, "127.0.0.1");
      sockets.add(client).add(upstream);
      client.on("data", (d) => {
        if (!stalled) upstream.write(d);
      });
      upstream.on("data", (d) => {
        if (!stalled) client.write(d);
      });
      client.on("error", () => {});
      upstream.on("error", () => {});
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", () => resolve()));
  }, 20_000);

  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => proxy?.close(resolve));
    await redis?.stop();
  });

  it("aborts the stalled holder's turn before another process can take the session", async () => {
    const timing: LeaseTiming = { ttlMs: 1_000, renewMs: 300 };
    const proxyUrl = `redis://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
    const coordA = await openRedisCoordination(proxyUrl, "A", () => {});
    const coordB = await openRedisCoordination(redis.url, "B", () => {});
    const lostA: string[] = [];
    const leasesA = new SessionLeases({
      coordination: coordA,
      processId: "procA",
      timing,
      logger: silent,
      onLost: (id) => lostA.push(id),
    });
    const leasesB = new SessionLeases({
      coordination: coordB,
      processId: "procB",
      timing,
      logger: silent,
      onLost: () => {},
    });
    try {
      const heldA = await leasesA.take("s1");
      expect(heldA).toBeDefined();
      stalled = true;

      // B tries until the lease lapses in Redis; A must have stopped by then.
      const until = Date.now() + 3 * timing.ttlMs;
      let heldB: Awaited<ReturnType<SessionLeases["take"]>>;
      let abortedWhenBTook: boolean | undefined;
      while (Date.now() < until) {
        const aborted = heldA!.signal.aborted;
        heldB = await leasesB.take("s1");
        if (heldB) {
          abortedWhenBTook = aborted;
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(heldB!).toBeDefined();
      expect(heldB!.fence.fence).toBe(heldA!.fence.fence + 1);
      expect(abortedWhenBTook).toBe(true);
      expect(lostA).toEqual(["s1"]);
      expect(leasesA.holding("s1")).toBeUndefined();
      await heldB!.release();
    } finally {
      stalled = false;
      // Cut A's silent connections: its pending commands fail instead of waiting forever.
      for (const s of sockets) s.destroy();
      await leasesA.releaseAll();
      await leasesB.releaseAll();
      // Its connections come back through the proxy; then it closes without pending commands.
      await eventually(
        () =>
          coordA.holder("s1").then(
            () => true,
            () => false,
          ),
        "A to reconnect",
      );
      await coordA.close();
      await coordB.close();
    }
  }, 15_000);
});
