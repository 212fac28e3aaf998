/**
 * Coordination contract: one suite run against the Redis coordination (a real redis-server on
 * loopback, two coordinations on it standing for two processes) and the in-process one (both
 * "processes" share one instance, as they would share one process). Leases exclude, expire and
 * fence; stale fenced writes are refused and fresh ones land where the store reads them; queues
 * are FIFO and exactly-once; pub/sub reaches the other side; claims are once.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createClient } from "@keyv/redis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  type Coordination,
  type StoreWrite,
  tokenOwner,
} from "../../../src/store/coordination/coordination.js";
import { createCoordination } from "../../../src/store/coordination/create-coordination.js";
import { InProcessCoordination } from "../../../src/store/coordination/in-process-coordination.js";
import { createStore } from "../../../src/store/create-store.js";
import type { Store } from "../../../src/store/store.js";
import { type RedisServer, startRedisServer } from "../../support/redis-server.js";
import { eventually } from "../../support/eventually.js";

/** How far a lapse's TTL check may be off (the time since the TTL was set, on a loaded host). */
const LAPSE_SLACK_MS = 30_000;

interface Pair {
  readonly store: Store;
  readonly a: Coordination;
  readonly b: Coordination;
  /**
   * Make a lease (or a claimOnce claim) that is held now lapse at its TTL, `ttlMs` from when it was
   * last set: the tests set TTLs no pause outlasts, so "still held" never races the clock, and
   * force the lapse here. It first checks the TTL is the one set, to within LAPSE_SLACK_MS (not
   * none, not shorter): Redis reads the key's PTTL, then gives it 1 ms; in-process, the clock
   * moves to just short of the TTL, the key must still be held, then past it.
   */
  lapse(kind: "lease" | "claim", key: string, ttlMs: number): Promise<void>;
  close(): Promise<void>;
}

interface Setup {
  readonly name: string;
  readonly distributed: boolean;
  open(): Promise<Pair>;
  teardown(): Promise<void>;
}

function redisSetup(): Setup {
  let server: RedisServer | undefined;
  return {
    name: "redis-server",
    distributed: true,
    open: async () => {
      server ??= await startRedisServer();
      const url = server.url;
      const store = await createStore({ url, dataDir: os.tmpdir() });
      const a = await createCoordination({ url, dataDir: os.tmpdir(), store });
      const b = await createCoordination({ url, dataDir: os.tmpdir(), store });
      const raw = createClient({ url });
      await raw.connect();
      return {
        store,
        a,
        b,
        // Key layout of redis-coordination.ts (no deployment prefix): coord:lease:<key>, coord:claim:<key>.
        lapse: async (kind, key, ttlMs) => {
          const redisKey = `coord:${kind}:${key}`;
          const left = await raw.pTTL(redisKey);
          expect(left, `the ${kind}'s TTL`).toBeGreaterThan(ttlMs - LAPSE_SLACK_MS);
          expect(left, `the ${kind}'s TTL`).toBeLessThanOrEqual(ttlMs);
          expect(await raw.pExpire(redisKey, 1)).toBe(1);
        },
        close: async () => {
          await a.close();
          await b.close();
          await store.close();
          await raw.close();
        },
      };
    },
    teardown: async () => {
      await server?.stop();
    },
  };
}

function inProcessSetup(): Setup {
  let dataDir = "";
  return {
    name: "in-process (sqlite store)",
    distributed: false,
    open: async () => {
      dataDir = await mkdtemp(path.join(os.tmpdir(), "coworker-coord-"));
      const store = await createStore({ dataDir });
      // What createCoordination opens for a SQLite store, with a clock the test can move.
      let skewMs = 0;
      const a = new InProcessCoordination(store, () => Date.now() + skewMs);
      return {
        store,
        a,
        b: a,
        lapse: async (kind, key, ttlMs) => {
          skewMs += ttlMs - LAPSE_SLACK_MS;
          if (kind === "lease") expect(await a.holder(key), "the lease just short of its TTL").toBeDefined();
          else expect(await a.claimOnce(key, 1), "the claim just short of its TTL").toBe(false);
          skewMs += LAPSE_SLACK_MS + 1;
        },
        close: async () => {
          await a.close();
          await store.close();
          await rm(dataDir, { recursive: true, force: true });
        },
      };
    },
    teardown: async () => undefined,
  };
}

let n = 0;
const unique = (what: string) => `${what}-${++n}-${Date.now()}`;

for (const setup of [redisSetup(), inProcessSetup()]) {
  describe(`coordination contract: ${setup.name}`, () => {
    let pair: Pair;
    beforeAll(async () => {
      pair = await setup.open();
    }, 20_000);
    afterAll(async () => {
      await pair?.close();
      await setup.teardown();
    });

    it("reports whether it spans processes", () => {
      expect(pair.a.distributed).toBe(setup.distributed);
    });

    it("a lease excludes others until released, and every acquisition gets a higher fence", async () => {
      const key = unique("lease");
      const first = await pair.a.acquire(key, 10_000);
      expect(first).toBeDefined();
      expect(await pair.b.acquire(key, 10_000)).toBeUndefined();
      expect(await pair.b.holder(key)).toBe(first?.token);
      expect(await pair.b.release(key, "not-the-token")).toBe(false);
      expect(await pair.a.release(key, first!.token)).toBe(true);
      expect(await pair.a.release(key, first!.token)).toBe(false);
      const second = await pair.b.acquire(key, 10_000, "process-b");
      expect(tokenOwner(second!.token)).toBe("process-b");
      expect(tokenOwner(first!.token)).toBeUndefined();
      expect(second?.fence).toBeGreaterThan(first!.fence);
      expect(await pair.a.currentFence(key)).toBe(second?.fence);
      await pair.b.release(key, second!.token);
    });

    it("a lease lapses at its TTL unless renewed; renewing with a lost token fails", async () => {
      const key = unique("ttl");
      // TTLs no pause outlasts, so the renewal finds the lease held; the lapse, at the renewed TTL
      // (well past the first), is then forced.
      const held = await pair.a.acquire(key, 30_000);
      expect(await pair.a.renew(key, held!.token, 120_000)).toBe(true);
      expect(await pair.b.holder(key)).toBe(held!.token);
      await pair.lapse("lease", key, 120_000);
      await eventually(async () => (await pair.b.holder(key)) === undefined, "the lease to lapse");
      expect(await pair.a.renew(key, held!.token, 10_000)).toBe(false);
      const next = await pair.b.acquire(key, 10_000);
      expect(next?.fence).toBe(held!.fence + 1);
      expect(await pair.a.renew(key, held!.token, 10_000)).toBe(false);
      expect(await pair.b.renew(key, next!.token, 10_000)).toBe(true);
      await pair.b.release(key, next!.token);
    });

    it("fenced writes land in the store while the fence is current and are refused once stale", async () => {
      const key = unique("fenced");
      const old = await pair.a.acquire(key, 50);
      const written = await pair.a.fencedWrite({ key, fence: old!.fence }, [
        { op: "set", namespace: "sessions", key: `${key}:rec`, value: { v: 1 } },
        { op: "set", namespace: "history", key: `${key}:page`, value: ["a"], ttlMs: 60_000 },
      ]);
      expect(written).toBe(true);
      expect(await pair.store.space("sessions").get(`${key}:rec`)).toEqual({ v: 1 });
      expect(await pair.store.space("history").get(`${key}:page`)).toEqual(["a"]);
      await eventually(async () => (await pair.b.holder(key)) === undefined, "the lease to lapse");
      const fresh = await pair.b.acquire(key, 10_000);
      expect(
        await pair.a.fencedWrite({ key, fence: old!.fence }, [
          { op: "set", namespace: "sessions", key: `${key}:rec`, value: { v: "stale" } },
          { op: "delete", namespace: "history", key: `${key}:page` },
        ]),
      ).toBe(false);
      expect(await pair.store.space("sessions").get(`${key}:rec`)).toEqual({ v: 1 });
      expect(await pair.store.space("history").get(`${key}:page`)).toEqual(["a"]);
      expect(
        await pair.b.fencedWrite({ key, fence: fresh!.fence }, [
          { op: "delete", namespace: "history", key: `${key}:page` },
        ]),
      ).toBe(true);
      expect(await pair.store.space("history").get(`${key}:page`)).toBeUndefined();
      await pair.b.release(key, fresh!.token);
    });

    it("a fenced write with a TTL expires like a store write", async () => {
      const key = unique("fenced-ttl");
      const held = await pair.a.acquire(key, 10_000);
      await pair.a.fencedWrite({ key, fence: held!.fence }, [
        { op: "set", namespace: "journal", key, value: "x", ttlMs: 60 },
      ]);
      await eventually(
        async () => (await pair.store.space("journal").get(key)) === undefined,
        "the entry to expire",
      );
      await pair.a.release(key, held!.token);
    });

    it("an offer queues its item, writes its claims and takes the lease when free; the holder gets the queue", async () => {
      const queue = unique("queue");
      const set = unique("index");
      const lease = { key: unique("lease"), ttlMs: 10_000, owner: "proc-a" };
      const claims = (id: string) => [
        { namespace: "dedupe" as const, key: `${queue}:${id}:event`, value: "seen", ttlMs: 60_000 },
        { namespace: "dedupe" as const, key: `${queue}:${id}:ts`, value: "seen" },
      ];
      /** Offer message `n` (claimed under its own ids unless `ids` says otherwise) through `side`. */
      const offerOn = (side: Coordination, n: number, ids = claims(String(n)), owner = lease.owner) =>
        side.offer({
          queue,
          item: `m${n}`,
          claims: ids,
          index: { set, member: "s1" },
          lease: { ...lease, owner },
        });
      const first = await offerOn(pair.a, 1);
      expect(first.status).toBe("taken");
      if (first.status !== "taken") return;
      expect(first.items).toEqual(["m1"]);
      expect(tokenOwner(first.grant.token)).toBe("proc-a");
      expect(await pair.b.members(set)).toEqual(["s1"]);
      expect(await pair.store.space("dedupe").get(`${queue}:1:ts`)).toBe("seen");
      // A redelivery (any one of its claims) changes nothing.
      const again = [{ ...claims("1")[1]! }, { ...claims("9")[0]! }];
      expect(await offerOn(pair.b, 1, again)).toEqual({
        status: "duplicate",
      });
      expect(await pair.store.space("dedupe").get(`${queue}:9:event`)).toBeUndefined();
      const second = await offerOn(pair.b, 2, claims("2"), "proc-b");
      expect(second).toEqual({ status: "queued", holder: first.grant.token });
      expect(await pair.a.items(queue, 0)).toEqual(["m1", "m2"]);
      expect(await pair.a.items(queue, 1)).toEqual(["m2"]);
      // The holder saves what it took and trims it from the queue in one fenced write.
      expect(
        await pair.a.fencedWrite({ key: lease.key, fence: first.grant.fence }, [
          { op: "set", namespace: "sessions", key: `${queue}:rec`, value: { took: 2 } },
          { op: "trim", queue, count: 2 },
          { op: "remove-member", set, member: "s1" },
        ]),
      ).toBe(true);
      expect(await pair.b.items(queue, 0)).toEqual([]);
      expect(await pair.b.members(set)).toEqual([]);
      expect(await pair.store.space("sessions").get(`${queue}:rec`)).toEqual({ took: 2 });
      const third = await offerOn(pair.b, 3);
      expect(third.status).toBe("queued");
      expect(await pair.b.releaseAndCount(lease.key, "not-the-token", queue)).toEqual({
        released: false,
        waiting: -1,
      });
      expect(await pair.a.releaseAndCount(lease.key, first.grant.token, queue)).toEqual({
        released: true,
        waiting: 1,
      });
      const fourth = await offerOn(pair.b, 4);
      expect(fourth.status).toBe("taken");
      if (fourth.status !== "taken") return;
      expect(fourth.items).toEqual(["m3", "m4"]);
      expect(fourth.grant.fence).toBe(first.grant.fence + 1);
      // The stale holder can no longer trim.
      expect(
        await pair.a.fencedWrite({ key: lease.key, fence: first.grant.fence }, [
          { op: "trim", queue, count: 2 },
        ]),
      ).toBe(false);
      expect(await pair.a.items(queue, 0)).toEqual(["m3", "m4"]);
      await pair.b.release(lease.key, fourth.grant.token);
    });

    it("a fenced write removes the first item of a queue equal to the one given, the others kept in order; refused once stale", async () => {
      const queue = unique("queue");
      const lease = { key: unique("lease"), ttlMs: 10_000, owner: "proc-a" };
      const offerOn = (side: Coordination, item: string) =>
        side.offer({ queue, item, claims: [], index: { set: unique("index"), member: "s1" }, lease });
      const first = await offerOn(pair.a, "m1");
      if (first.status !== "taken") throw new Error("the first offer takes the lease");
      for (const item of ["refused", "m2", "refused", "m3"]) await offerOn(pair.b, item);
      const fence = { key: lease.key, fence: first.grant.fence };
      expect(await pair.a.fencedWrite(fence, [{ op: "remove-item", queue, item: "refused" }])).toBe(true);
      expect(await pair.b.items(queue, 0)).toEqual(["m1", "m2", "refused", "m3"]);
      expect(await pair.a.fencedWrite(fence, [{ op: "remove-item", queue, item: "absent" }])).toBe(true);
      expect(await pair.b.items(queue, 0)).toEqual(["m1", "m2", "refused", "m3"]);
      await pair.a.release(lease.key, first.grant.token);
      const next = await pair.b.acquire(lease.key, 10_000);
      expect(await pair.a.fencedWrite(fence, [{ op: "remove-item", queue, item: "refused" }])).toBe(false);
      expect(await pair.b.items(queue, 0)).toEqual(["m1", "m2", "refused", "m3"]);
      await pair.b.release(lease.key, next!.token);
    });

    it("insertIfAbsent writes its keys only when the first is absent, once among racing callers", async () => {
      const key = unique("thread");
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          (i % 2 === 0 ? pair.a : pair.b).insertIfAbsent({ namespace: "sessions", key, value: `s${i}` }, [
            { namespace: "sessions", key: `${key}:rec:s${i}`, value: { id: `s${i}` } },
          ]),
        ),
      );
      const winners = results.flatMap((won, i) => (won ? [i] : []));
      expect(winners).toHaveLength(1);
      const sessions = pair.store.space("sessions");
      expect(await sessions.get(key)).toBe(`s${winners[0]}`);
      for (let i = 0; i < 10; i++)
        expect(await sessions.get(`${key}:rec:s${i}`)).toEqual(
          i === winners[0] ? { id: `s${i}` } : undefined,
        );
    });

    it("refuses what the store would refuse, and bad lease TTLs, before writing anything", async () => {
      const key = unique("refused");
      const held = await pair.a.acquire(key, 10_000);
      const fence = { key, fence: held!.fence };
      const good = { namespace: "history" as const, key: `${key}:good`, value: "a" };
      const queue = unique("queue");
      const set = unique("set");
      const lease = { key: unique("lease"), ttlMs: 10_000, owner: "p" };
      const offerOf = (claims: readonly StoreWrite[], ttlMs = lease.ttlMs) =>
        pair.a.offer({ queue, item: "m", claims, index: { set, member: "s" }, lease: { ...lease, ttlMs } });
      const refused: ReadonlyArray<readonly [string, StoreWrite]> = [
        ["a key over 200 characters", { namespace: "history", key: "t".repeat(201), value: "b" }],
        // On Redis "x\uD800" and "x\uDBFF" would both become "x\uFFFD": one key for two.
        ["a lone surrogate", { namespace: "history", key: "x\uD800", value: "b" }],
        ["an undefined value", { namespace: "history", key: `${key}:u`, value: undefined }],
        ["a TTL of 1.5 ms", { namespace: "history", key: `${key}:t`, value: "b", ttlMs: 1.5 }],
        ["a TTL of 0", { namespace: "history", key: `${key}:z`, value: "b", ttlMs: 0 }],
      ];
      for (const [what, write] of refused) {
        await expect(
          pair.a.fencedWrite(fence, [
            { op: "set", ...good },
            { op: "set", ...write },
          ]),
          what,
        ).rejects.toThrow(/^store: /);
        await expect(pair.a.insertIfAbsent(good, [write]), what).rejects.toThrow(/^store: /);
        await expect(offerOf([good, write]), what).rejects.toThrow(/^store: /);
      }
      await expect(
        pair.a.fencedWrite(fence, [
          { op: "set", ...good },
          { op: "delete", namespace: "history", key: "x\uDBFF" },
        ]),
      ).rejects.toThrow(/^store: /);
      await expect(
        pair.a.fencedWrite(fence, [
          { op: "set", ...good },
          { op: "trim", queue, count: 1.5 },
        ]),
      ).rejects.toThrow(/^coordination: trim count/);
      // An offer whose lease TTL is bad fails before its claims are written: its retry is no duplicate.
      await expect(offerOf([good], 1.5)).rejects.toThrow(/^coordination: ttlMs/);
      expect(await pair.store.space("history").get(good.key)).toBeUndefined();
      expect(await pair.b.items(queue, 0)).toEqual([]);
      expect(await pair.b.members(set)).toEqual([]);
      expect(await pair.b.holder(lease.key)).toBeUndefined();
      const taken = await offerOf([good]);
      expect(taken.status).toBe("taken");
      if (taken.status === "taken") await pair.a.release(lease.key, taken.grant.token);

      const other = unique("ttl");
      for (const ttlMs of [1.5, 0, -1, Number.NaN]) {
        await expect(pair.a.acquire(other, ttlMs), String(ttlMs)).rejects.toThrow(/^coordination: ttlMs/);
        await expect(pair.a.renew(key, held!.token, ttlMs), String(ttlMs)).rejects.toThrow(
          /^coordination: ttlMs/,
        );
        await expect(pair.a.claimOnce(other, ttlMs), String(ttlMs)).rejects.toThrow(/^coordination: ttlMs/);
      }
      expect(await pair.b.holder(other)).toBeUndefined();
      expect(await pair.b.claimOnce(other, 60_000)).toBe(true);
      await pair.a.release(key, held!.token);
    });

    it("a claim or first key whose entry this process's clock finds expired is free again, though Redis may still hold it", async () => {
      const queue = unique("stale");
      const claim = { namespace: "dedupe" as const, key: `${queue}:delivery`, value: "seen", ttlMs: 60_000 };
      const offer = (item: string) =>
        pair.a.offer({
          queue,
          item,
          claims: [claim],
          index: { set: unique("set"), member: "s" },
          lease: { key: unique("lease"), ttlMs: 10_000, owner: "p" },
        });
      expect((await offer("m1")).status).toBe("taken");
      expect((await offer("m1 again")).status).toBe("duplicate");
      const key = unique("thread");
      expect(
        await pair.a.insertIfAbsent({ namespace: "sessions", key, value: "old", ttlMs: 60_000 }, []),
      ).toBe(true);
      vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 120_000 });
      try {
        expect(await pair.store.space("dedupe").get(claim.key)).toBeUndefined();
        expect((await offer("m1 after the window")).status).not.toBe("duplicate");
        expect(await pair.b.insertIfAbsent({ namespace: "sessions", key, value: "new" }, [])).toBe(true);
        expect(await pair.store.space("sessions").get(key)).toBe("new");
        expect(await pair.b.insertIfAbsent({ namespace: "sessions", key, value: "newer" }, [])).toBe(false);
      } finally {
        vi.useRealTimers();
      }
    });

    it("of 20 offers of one delivery at once, exactly one is taken in, the others are duplicates", async () => {
      const queue = unique("race");
      const lease = { key: unique("lease"), ttlMs: 10_000, owner: "p" };
      const outcomes = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 === 0 ? pair.a : pair.b).offer({
            queue,
            item: `copy ${i}`,
            claims: [{ namespace: "dedupe", key: `${queue}:delivery`, value: i }],
            index: { set: unique("set"), member: "s" },
            lease,
          }),
        ),
      );
      expect(outcomes.filter((o) => o.status !== "duplicate")).toHaveLength(1);
      expect(await pair.a.items(queue, 0)).toHaveLength(1);
    });

    it("a published message reaches the other side's subscribers in order, until they unsubscribe", async () => {
      const channel = unique("channel");
      const got: string[] = [];
      const off = await pair.b.subscribe(channel, (m) => got.push(m));
      for (const m of ["one", "two", "three"]) await pair.a.publish(channel, m);
      await eventually(async () => got.length === 3, "three messages");
      expect(got).toEqual(["one", "two", "three"]);
      await off();
      await pair.a.publish(channel, "after");
      const marker = unique("marker");
      const seen: string[] = [];
      const offMarker = await pair.b.subscribe(marker, (m) => seen.push(m));
      await pair.a.publish(marker, "done");
      await eventually(async () => seen.length === 1, "the marker");
      expect(got).toEqual(["one", "two", "three"]);
      await offMarker();
    });

    it("a publish says whether it reached a subscriber: not once the only one has left", async () => {
      const channel = unique("reach");
      expect(await pair.a.publish(channel, "nobody")).toBe(false);
      const off = await pair.b.subscribe(channel, () => undefined);
      expect(await pair.a.publish(channel, "one")).toBe(true);
      await off();
      expect(await pair.a.publish(channel, "gone")).toBe(false);
    });

    it("claimOnce is true for one caller only, until the claim expires", async () => {
      const key = unique("claim");
      // A TTL no pause outlasts, so the third call finds the claim held; its expiry is then forced.
      const results = await Promise.all([pair.a.claimOnce(key, 60_000), pair.b.claimOnce(key, 60_000)]);
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await pair.a.claimOnce(key, 60_000)).toBe(false);
      await pair.lapse("claim", key, 60_000);
      await eventually(() => pair.b.claimOnce(key, 10_000), "the claim to expire");
      expect(await pair.a.claimOnce(key, 10_000)).toBe(false);
    });

    it("lists the members of a set whose lease nobody holds, in one step", async () => {
      const set = unique("active");
      const prefix = `${unique("lease")}:`;
      for (const member of ["a", "b", "c"]) await pair.a.addMember(set, member);
      const held = await pair.b.acquire(`${prefix}b`, 10_000);
      expect([...(await pair.a.unleasedMembers(set, prefix))].sort()).toEqual(["a", "c"]);
      await pair.b.release(`${prefix}b`, held!.token);
      expect([...(await pair.a.unleasedMembers(set, prefix))].sort()).toEqual(["a", "b", "c"]);
      expect(await pair.a.unleasedMembers(unique("empty"), prefix)).toEqual([]);
    });

    it("sets are shared indexes", async () => {
      const set = unique("set");
      await pair.a.addMember(set, "s1");
      await pair.b.addMember(set, "s2");
      await pair.b.addMember(set, "s1");
      expect([...(await pair.a.members(set))].sort()).toEqual(["s1", "s2"]);
      await pair.a.removeMember(set, "s1");
      expect(await pair.b.members(set)).toEqual(["s2"]);
      expect(await pair.a.ping()).toEqual({ ok: true });
    });

    it("maps are shared indexes keyed by field", async () => {
      const map = unique("map");
      await pair.a.setField(map, "i1", "one");
      await pair.b.setField(map, "i2", "two");
      await pair.b.setField(map, "i1", "uno");
      expect(await pair.a.fields(map)).toEqual({ i1: "uno", i2: "two" });
      expect(await pair.a.deleteField(map, "i1")).toBe(true);
      expect(await pair.b.deleteField(map, "i1")).toBe(false);
      expect(await pair.b.fields(map)).toEqual({ i2: "two" });
      expect(await pair.b.fields(unique("empty"))).toEqual({});
    });
  });
}
