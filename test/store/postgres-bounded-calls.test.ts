/**
 * Every call on the Postgres store is bounded in time, on a real PostgreSQL: a link that stops
 * answering without closing (a TCP proxy that stops forwarding) fails calls and turns health
 * false instead of leaving them waiting, and a table lock held by another client of the database
 * (a migration, a DBA's transaction) fails calls with a lock timeout — more of them than the pool
 * has connections — turns health false and fails opening a store, instead of hanging all three.
 * The errors name the store and never its credentials. Both recover when the link or the lock does.
 * No call is timed: the test timeout is the bound a hanging call would exceed.
 */
import os from "node:os";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { createStore } from "../../src/store/create-store.js";
import { storeFailure } from "../../src/store/store-failure.js";
import { eventually } from "../support/eventually.js";
import { postgresForSuite } from "../support/postgres-server.js";
import { StallingProxy } from "../support/stalling-proxy.js";

const server = postgresForSuite();

/** How `call` settled: its value, or its error's message. */
async function settled(call: Promise<unknown>): Promise<{ value: unknown } | { error: string }> {
  return call.then(
    (value) => ({ value }),
    (error: Error) => ({ error: error.message }),
  );
}

describe("postgres store: bounded calls", () => {
  it("a stalled link fails calls (the one in flight and a new connection) and health instead of hanging them", async () => {
    const proxy = new StallingProxy(server.port);
    const port = new URL(await proxy.listen()).port;
    const store = await createStore({
      url: `postgres://coworker:s3cret@127.0.0.1:${port}/postgres`,
      dataDir: os.tmpdir(),
      onError: () => undefined,
    });
    const named = new RegExp(`^Postgres store at postgres://127\\.0\\.0\\.1:${port}/postgres: `);
    try {
      await store.space("sessions").set("s1", { ok: true });
      proxy.stall();
      // The pool's connection is silent: no reply.
      const inFlight = await settled(store.space("sessions").get("s1"));
      expect(inFlight).toEqual({ error: expect.stringMatching(named) });
      expect(inFlight).toEqual({ error: expect.stringMatching(/no reply within \d+ ms/) });
      expect(inFlight).not.toEqual({ error: expect.stringMatching(/s3cret/) });
      // A new connection over the silent link never starts: the connect timeout ends it.
      expect(await settled(store.space("sessions").get("s1"))).toEqual({
        error: expect.stringMatching(named),
      });
      // Health is not ready, with a reason that does not carry the URL's password.
      const health = await store.ping();
      expect(health).toEqual({ ok: false, detail: expect.any(String) });
      expect(health.detail).not.toMatch(/s3cret/);

      proxy.resume();
      await eventually(async () => (await store.ping()).ok, "health to recover", 30_000);
      expect(await store.space("sessions").get("s1")).toEqual({ ok: true });
    } finally {
      await proxy.close();
      await store.close().catch(() => undefined);
    }
  }, 60_000);

  it("a lock held by another client fails calls with a lock timeout, turns health false and fails opening, without exhausting the pool", async () => {
    const store = await createStore({ url: server.url, dataDir: os.tmpdir(), onError: () => undefined });
    const locker = new pg.Client({ connectionString: server.url });
    await locker.connect();
    try {
      await store.space("sessions").set("s1", { ok: true });
      await locker.query("BEGIN; LOCK TABLE public.keyv IN ACCESS EXCLUSIVE MODE");
      // More calls than the pool has connections (10): every one settles.
      const calls = await Promise.all(
        Array.from({ length: 12 }, (_, n) => settled(store.space("memory").get(`k${n}`))),
      );
      for (const call of calls) {
        expect(call).toEqual({
          error: expect.stringMatching(
            new RegExp(`^Postgres store at postgres://127\\.0\\.0\\.1:${server.port}/postgres: `),
          ),
        });
      }
      expect(calls[0]).toEqual({ error: expect.stringMatching(/lock timeout/) });
      // Health takes the lock writes take on the table, so the lock shows: not ready.
      expect(await store.ping()).toEqual({ ok: false, detail: expect.stringMatching(/lock timeout/) });
      // Opening purges expired rows, which waits for the lock: it fails, clearly, and start's
      // advice names the lock, not a server that is down.
      const opening = await createStore({ url: server.url, dataDir: os.tmpdir() }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect((opening as Error).message).toMatch(
        new RegExp(
          `^cannot reach the Postgres store at postgres://127\\.0\\.0\\.1:${server.port}/postgres: .*lock timeout`,
        ),
      );
      expect(storeFailure(opening, true, os.tmpdir()).fix).toContain(
        "another client holds a lock on the store's table",
      );

      await locker.query("ROLLBACK");
      // Polled: one ping has PING_TIMEOUT_MS (2 s) for a new connection, a timed bound on a loaded host.
      await eventually(
        async () => (await store.ping()).ok,
        "health to recover once the lock is released",
        30_000,
      );
      expect(await store.space("sessions").get("s1")).toEqual({ ok: true });
    } finally {
      await locker.query("ROLLBACK").catch(() => undefined);
      await locker.end();
      await store.close();
    }
  }, 60_000);
});
