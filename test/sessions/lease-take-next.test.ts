/**
 * Taking a session's lease back only as its next holder (SessionLeases.take with `after`, used by
 * LeaseGate.retake for a turn parked under a lease lost while it waited): when another process
 * held the session between, the later grant is given back unheld and the fence this process
 * remembers stays the old one — else the stale turn's writes would carry the new fence and go
 * through, over what the other process saved.
 */
import pino from "pino";
import { describe, expect, it } from "vitest";
import { SessionLeases } from "../../src/sessions/lease-lock.js";
import type { Coordination } from "../../src/store/coordination/coordination.js";

/** A coordination granting every lease with the next fence, recording what is given back. */
function countingCoordination() {
  let fence = 0;
  const released: string[] = [];
  const coordination = {
    acquire: async (_key: string, _ttl: number, owner?: string) => ({ token: `${owner}/t${++fence}`, fence }),
    renew: async () => true,
    release: async (_key: string, token: string) => {
      released.push(token);
      return true;
    },
    holder: async () => undefined,
  } as unknown as Coordination;
  return { coordination, released };
}

function leasesOf(coordination: Coordination) {
  return new SessionLeases({
    coordination,
    processId: "A",
    timing: { ttlMs: 60_000, renewMs: 20_000 },
    logger: pino({ level: "silent" }),
    onLost: () => undefined,
  });
}

describe("SessionLeases.take after a fence", () => {
  it("holds the lease when it is the next one after the fence", async () => {
    const { coordination } = countingCoordination();
    const leases = leasesOf(coordination);
    const first = await leases.take("s1");
    expect(first?.fence.fence).toBe(1);
    await first?.release();
    const again = await leases.take("s1", { key: first!.fence.key, fence: 1 });
    expect(again?.fence.fence).toBe(2);
    expect(leases.fenceOf("s1")?.fence).toBe(2);
    await again?.release();
  });

  it("gives a later grant back unheld, the remembered fence staying the old one", async () => {
    const { coordination, released } = countingCoordination();
    const leases = leasesOf(coordination);
    const first = await leases.take("s1");
    await first?.release();
    // Another process holds the session (fence 2) and lets it go.
    await coordination.acquire(first!.fence.key, 60_000, "B");
    expect(await leases.take("s1", { key: first!.fence.key, fence: 1 })).toBeUndefined();
    expect(leases.holding("s1")).toBeUndefined();
    expect(leases.fenceOf("s1")?.fence).toBe(1);
    expect(released.at(-1)).toBe("A/t3");
  });
});
