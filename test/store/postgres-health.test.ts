/**
 * The Postgres store's health ping notices what stops its writes, on a real PostgreSQL: a lock
 * another session holds against writes only (`LOCK TABLE … IN EXCLUSIVE MODE`: reads go on) used
 * to pass the ping, which read the table, so a store that could not write reported ready. The
 * ping now takes the lock a write takes, writing nothing, and fails with the server's reason;
 * reads are not harmed meanwhile, and health comes back once the lock goes.
 */
import os from "node:os";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { openPostgresBackend } from "../../src/store/backends/postgres.js";
import { boundedPool } from "../../src/store/backends/postgres-pool.js";
import { PostgresTable } from "../../src/store/backends/postgres-table.js";
import { createStore } from "../../src/store/create-store.js";
import { eventually } from "../support/eventually.js";
import { postgresForSuite } from "../support/postgres-server.js";

const server = postgresForSuite();

describe("postgres store: health", () => {
  it("a lock that blocks only writes turns health false with the lock as the reason, while reads go on", async () => {
    const store = await createStore({ url: server.url, dataDir: os.tmpdir(), onError: () => undefined });
    const backend = await openPostgresBackend(server.url, "test", () => undefined);
    const locker = new pg.Client({ connectionString: server.url });
    await locker.connect();
    try {
      await store.space("sessions").set("s1", { ok: true });
      expect(await store.ping()).toEqual({ ok: true });
      await locker.query("BEGIN; LOCK TABLE public.keyv IN EXCLUSIVE MODE");

      expect(await store.space("sessions").get("s1")).toEqual({ ok: true });
      await expect(backend.ping()).rejects.toThrow(/^Postgres store at test: .*lock timeout/);
      expect(await store.ping()).toEqual({
        ok: false,
        detail: expect.stringMatching(/^Postgres store at postgres:\/\/.*lock timeout/),
      });

      await locker.query("ROLLBACK");
      // Polled: one ping has PING_TIMEOUT_MS (2 s) for a new connection, a timed bound on a loaded host.
      await eventually(
        async () => (await store.ping()).ok,
        "health to recover once the lock is released",
        30_000,
      );
      await store.space("sessions").set("s1", { ok: false });
      expect(await store.space("sessions").get("s1")).toEqual({ ok: false });
    } finally {
      await locker.query("ROLLBACK").catch(() => undefined);
      await locker.end();
      await backend.close();
      await store.close();
    }
  });

  it("a server that refuses writes (read-only sessions, as on a replica) turns health false", async () => {
    // Every session of this pool is read-only, as after a failover to a replica.
    const url = new URL(server.url);
    url.searchParams.set("options", "-c default_transaction_read_only=on");
    const table = new PostgresTable(boundedPool(url.href), "public.keyv", "read-only");
    table.on("error", () => undefined);
    try {
      // Reads still work: only writes are refused.
      expect(await table.get("sessions:absent")).toBeUndefined();
      await expect(table.ping()).rejects.toThrow(/^Postgres store at read-only: .*read-only transaction/);
    } finally {
      await table.disconnect();
    }
  });
});
