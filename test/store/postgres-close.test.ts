/**
 * Closing the Postgres store resolves once its pool's connections are closed, not once they were
 * asked to end (pg's `pool.end()`): the server stopped right after a close (a test's teardown, an
 * operator's restart) used to find them still open and end them with "terminating connection due
 * to administrator command", an error reported after the store was closed (a test's throwing
 * sink made it an uncaught exception that failed the whole run). A call still waiting for a
 * connection when the store closes fails then with "the store closed…": it used to sit in pg's
 * queue until the pool's connect timeout and fail as a connect timeout.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { openPostgresBackend } from "../../src/store/backends/postgres.js";
import { eventually } from "../support/eventually.js";
import { type PostgresServer, startPostgresServer } from "../support/postgres-server.js";

let server: PostgresServer | undefined;
beforeAll(async () => {
  server = await startPostgresServer();
}, 120_000);
afterAll(async () => {
  await server?.stop();
});

describe("postgres store: close", () => {
  it("fails a call still waiting for a connection when it closes, and calls after it, as closed", async () => {
    if (!server) throw new Error("postgres did not start (see the setup error above)");
    let pool: pg.Pool | undefined;
    const connect = pg.Pool.prototype.connect;
    const spy = vi.spyOn(pg.Pool.prototype, "connect").mockImplementation(function (
      this: pg.Pool,
      ...args: unknown[]
    ) {
      pool = this;
      return Reflect.apply(connect, this, args);
    } as typeof connect);
    const backend = await openPostgresBackend(server.url, "test", () => undefined);
    const locker = new pg.Client({ connectionString: server.url });
    await locker.connect();
    try {
      await locker.query("BEGIN; LOCK TABLE public.keyv IN ACCESS EXCLUSIVE MODE");
      // Every connection of the pool (10) waits for the lock (2 s); the eleventh call waits for a connection.
      const holding = Array.from({ length: 10 }, (_, n) =>
        backend
          .keyv("memory")
          .get(`k${n}`)
          .catch(() => undefined),
      );
      const waiting = backend.keyv("memory").get("k10");
      await eventually(() => pool?.waitingCount === 1, "the eleventh call to wait for a connection");
      const closing = backend.close();
      await expect(waiting).rejects.toThrow(
        /^Postgres store at test: the store closed while the call waited for a connection$/,
      );
      await expect(backend.ping()).rejects.toThrow(/^Postgres store at test: the store is closed$/);
      await locker.query("ROLLBACK");
      await Promise.all(holding);
      await closing;
    } finally {
      spy.mockRestore();
      await locker.query("ROLLBACK").catch(() => undefined);
      await locker.end();
    }
  });

  it("resolves once every connection is closed, so a server stopping next reports nothing", async () => {
    if (!server) throw new Error("postgres did not start (see the setup error above)");
    const opened: pg.Client[] = [];
    const ended = new Set<pg.Client>();
    const connect = pg.Client.prototype.connect;
    const spy = vi.spyOn(pg.Client.prototype, "connect").mockImplementation(function (
      this: pg.Client,
      ...args: unknown[]
    ) {
      opened.push(this);
      this.once("end", () => ended.add(this));
      return Reflect.apply(connect, this, args);
    } as typeof connect);
    const errors: unknown[] = [];
    try {
      const backend = await openPostgresBackend(server.url, "test", (error) => errors.push(error));
      // Calls at once: the pool opens several connections, all idle when the store closes.
      await Promise.all(["a", "b", "c", "d"].map((key) => backend.keyv("sessions").set(key, key)));
      await backend.close();
    } finally {
      spy.mockRestore();
    }

    expect(opened.length).toBeGreaterThan(1);
    expect(opened.filter((client) => !ended.has(client))).toEqual([]);
    await server.stop();
    server = undefined;
    expect(errors).toEqual([]);
  });
});
