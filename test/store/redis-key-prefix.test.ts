/**
 * Deployments sharing one Redis (one database, even) keep apart by their key prefix
 * (store_redis_prefix): two deployments with different prefixes, and one without, never see each
 * other's sessions, dedupe marks, leases, fences, queues, sets, maps, claims or pub/sub messages,
 * and every key a prefixed deployment writes starts with `<prefix>:`. Without a prefix the keys
 * are laid out as before prefixes existed, so data written then stays readable.
 */
import os from "node:os";
import { createClient } from "@keyv/redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Coordination } from "../../src/store/coordination/coordination.js";
import { createCoordination } from "../../src/store/coordination/create-coordination.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/store.js";
import { eventually } from "../support/eventually.js";
import { type RedisServer, startRedisServer } from "../support/redis-server.js";

interface Deployment {
  readonly store: Store;
  readonly coordination: Coordination;
}

let redis: RedisServer;
let raw: ReturnType<typeof createClient>;
const opened: Deployment[] = [];

async function deployment(keyPrefix: string | undefined): Promise<Deployment> {
  const store = await createStore({ url: redis.url, dataDir: os.tmpdir(), keyPrefix });
  const coordination = await createCoordination({ url: redis.url, dataDir: os.tmpdir(), store, keyPrefix });
  const opened_ = { store, coordination };
  opened.push(opened_);
  return opened_;
}

beforeAll(async () => {
  redis = await startRedisServer();
  raw = createClient({ url: redis.url });
  await raw.connect();
}, 20_000);

afterAll(async () => {
  for (const { store, coordination } of opened) {
    await coordination.close();
    await store.close();
  }
  if (raw?.isOpen) await raw.close();
  await redis?.stop();
});

describe("Redis key prefix", () => {
  it("keeps two prefixed deployments and an unprefixed one apart on one Redis database", async () => {
    await raw.flushAll();
    const a = await deployment("team-a");
    const b = await deployment("team-b");
    const plain = await deployment(undefined);

    // Sessions, history and dedupe marks.
    await a.store.space("sessions").set("s1", { owner: "a" });
    expect(await b.store.space("sessions").get("s1")).toBeUndefined();
    expect(await plain.store.space("sessions").get("s1")).toBeUndefined();
    await b.store.space("sessions").set("s1", { owner: "b" });
    await plain.store.space("sessions").set("s1", { owner: "plain" });
    expect(await a.store.space("sessions").get("s1")).toEqual({ owner: "a" });
    expect(await a.store.space("sessions").getMany?.(["s1"])).toEqual([{ owner: "a" }]);
    expect(await a.store.space("dedupe").setIfAbsent("event-1", 1, 60_000)).toBe(true);
    expect(await b.store.space("dedupe").setIfAbsent("event-1", 1, 60_000)).toBe(true);
    expect(await plain.store.space("dedupe").setIfAbsent("event-1", 1, 60_000)).toBe(true);
    expect(await a.store.space("dedupe").setIfAbsent("event-1", 1, 60_000)).toBe(false);
    expect(await b.store.space("sessions").delete("s1")).toBe(true);
    expect(await a.store.space("sessions").get("s1")).toEqual({ owner: "a" });
    // A compare-and-delete reads and deletes its own deployment's key only.
    expect(await b.store.space("sessions").deleteIf("s1", { owner: "a" })).toBe(false);
    expect(await plain.store.space("sessions").deleteIf("s1", { owner: "a" })).toBe(false);
    await b.store.space("sessions").set("s1", { owner: "a" });
    expect(await b.store.space("sessions").deleteIf("s1", { owner: "a" })).toBe(true);
    expect(await b.store.space("sessions").get("s1")).toBeUndefined();
    expect(await a.store.space("sessions").get("s1")).toEqual({ owner: "a" });
    expect(await plain.store.space("sessions").get("s1")).toEqual({ owner: "plain" });

    // Leases and fences: A's holder does not hold B's key of the same name.
    const leaseA = await a.coordination.acquire("session:s1", 60_000, "procA");
    expect(leaseA).toBeDefined();
    const leaseB = await b.coordination.acquire("session:s1", 60_000, "procB");
    expect(leaseB).toEqual(expect.objectContaining({ fence: 1 }));
    expect(await plain.coordination.holder("session:s1")).toBeUndefined();
    expect(await plain.coordination.currentFence("session:s1")).toBe(0);

    // Fenced writes and atomic inserts land in their own deployment's store.
    expect(
      await a.coordination.fencedWrite({ key: "session:s1", fence: leaseA!.fence }, [
        { op: "set", namespace: "history", key: "s1", value: ["a's turn"] },
        { op: "add-member", set: "busy", member: "s1" },
      ]),
    ).toBe(true);
    expect(await a.store.space("history").get("s1")).toEqual(["a's turn"]);
    expect(await b.store.space("history").get("s1")).toBeUndefined();
    expect(await plain.store.space("history").get("s1")).toBeUndefined();
    expect(await a.coordination.members("busy")).toEqual(["s1"]);
    expect(await b.coordination.members("busy")).toEqual([]);
    const thread = { namespace: "sessions" as const, key: "thread:t1", value: "a-session" };
    expect(await a.coordination.insertIfAbsent(thread, [])).toBe(true);
    expect(await b.coordination.insertIfAbsent({ ...thread, value: "b-session" }, [])).toBe(true);
    expect(await a.store.space("sessions").get("thread:t1")).toBe("a-session");
    expect(await b.store.space("sessions").get("thread:t1")).toBe("b-session");

    // Offers: a claim of A's is no duplicate for B, and queues are each their own.
    const offer = (owner: string) => ({
      queue: "input:s2",
      item: `from ${owner}`,
      claims: [{ namespace: "dedupe" as const, key: "delivery-7", value: 1, ttlMs: 60_000 }],
      index: { set: "with-work", member: "s2" },
      lease: { key: "session:s2", ttlMs: 60_000, owner },
    });
    expect((await a.coordination.offer(offer("procA"))).status).toBe("taken");
    expect((await b.coordination.offer(offer("procB"))).status).toBe("taken");
    expect((await a.coordination.offer(offer("procA"))).status).toBe("duplicate");
    expect(await a.coordination.items("input:s2", 0)).toEqual(["from procA"]);
    expect(await b.coordination.items("input:s2", 0)).toEqual(["from procB"]);
    expect(await plain.coordination.items("input:s2", 0)).toEqual([]);
    expect(await plain.coordination.unleasedMembers("with-work", "session:")).toEqual([]);

    // Claims and maps.
    expect(await a.coordination.claimOnce("wake:1", 60_000)).toBe(true);
    expect(await b.coordination.claimOnce("wake:1", 60_000)).toBe(true);
    expect(await plain.coordination.claimOnce("wake:1", 60_000)).toBe(true);
    expect(await a.coordination.claimOnce("wake:1", 60_000)).toBe(false);
    await a.coordination.setField("catalog", "sub-1", "a's");
    expect(await b.coordination.fields("catalog")).toEqual({});
    expect(await a.coordination.fields("catalog")).toEqual({ "sub-1": "a's" });

    // Pub/sub channels are shared by every database of a Redis: the prefix keeps them apart too.
    const heardByA: string[] = [];
    const heardByB: string[] = [];
    const stopA = await a.coordination.subscribe("process:p1", (m) => heardByA.push(m));
    const stopB = await b.coordination.subscribe("process:p1", (m) => heardByB.push(m));
    expect(await plain.coordination.publish("process:p1", "to nobody")).toBe(false);
    expect(await a.coordination.publish("process:p1", "stop s1")).toBe(true);
    await eventually(() => heardByA.length === 1, "A's message to reach A");
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(heardByA).toEqual(["stop s1"]);
    expect(heardByB).toEqual([]);
    await stopA();
    await stopB();

    // Every key a prefixed deployment wrote is under its prefix; the unprefixed layout is as before.
    const keys = await raw.keys("*");
    const bare = keys.filter((key) => !key.startsWith("team-a:") && !key.startsWith("team-b:"));
    expect(bare.sort()).toEqual(["coord:claim:wake:1", "dedupe::event-1", "sessions::s1"].sort());
    expect(keys).toEqual(expect.arrayContaining(["team-a:sessions::s1", "team-a:coord:lease:session:s1"]));
  });

  it("reads what an unprefixed deployment wrote before prefixes existed", async () => {
    await raw.flushAll();
    await raw.set("sessions::old", JSON.stringify({ value: { written: "before" } }));
    const plain = await deployment(undefined);
    expect(await plain.store.space("sessions").get("old")).toEqual({ written: "before" });
  });

  it.each(["team:a", "", "has space", "x".repeat(65)])("refuses the prefix %j", async (prefix) => {
    await expect(createStore({ url: redis.url, dataDir: os.tmpdir(), keyPrefix: prefix })).rejects.toThrow(
      /Redis key prefix/,
    );
  });
});
