/**
 * The Postgres store's pool sets its server-side timeouts (statement, lock, idle in transaction)
 * with SET on each new connection, on a real PostgreSQL behind a TCP proxy that sees what the
 * client sends: the startup packet carries none of them (PgBouncer refuses unknown startup
 * parameters, so every connection through it failed), and a pooled connection's first call
 * already runs with them.
 */
import { describe, expect, it } from "vitest";
import { boundedPool } from "../../src/store/backends/postgres-pool.js";
import { postgresForSuite } from "../support/postgres-server.js";
import { StallingProxy } from "../support/stalling-proxy.js";

const server = postgresForSuite();

/**
 * The store's pool, with the 'error' listener the store gives it: `pool.end()` resolves before its
 * connections have closed, so the suite's server stopping right after could end one with an error
 * (an uncaught exception on a pool without a listener). The tests read no errors from it.
 */
function openPool(url: string): ReturnType<typeof boundedPool> {
  const pool = boundedPool(url);
  pool.on("error", () => undefined);
  return pool;
}

/** The parameter names of a v3 startup packet at the start of `sent` (latin1): name\0value\0 pairs after length and protocol. */
function startupParameterNames(sent: string): string[] {
  const bytes = Buffer.from(sent, "latin1");
  const length = bytes.readUInt32BE(0);
  expect(bytes.readUInt32BE(4)).toBe(196_608);
  const fields = bytes.subarray(8, length).toString("utf8").split("\0");
  return fields.filter((_, index) => index % 2 === 0 && fields[index] !== "");
}

describe("postgres store: session timeouts", () => {
  it("are set on each connection, not sent as startup parameters", async () => {
    const proxy = new StallingProxy(server.port);
    const port = new URL(await proxy.listen()).port;
    const pool = openPool(`postgres://coworker@127.0.0.1:${port}/postgres`);
    try {
      // Two connections at once: each is set up, each first call sees the timeouts.
      const clients = await Promise.all([pool.connect(), pool.connect()]);
      try {
        for (const client of clients) {
          const shown = await client.query(
            "SELECT current_setting('statement_timeout') AS statement, current_setting('lock_timeout') AS lock, current_setting('idle_in_transaction_session_timeout') AS idle",
          );
          expect(shown.rows).toEqual([{ statement: "10s", lock: "2s", idle: "10s" }]);
        }
      } finally {
        for (const client of clients) client.release();
      }

      const sent: string[] = [];
      proxy.stall((link) => {
        sent.push(link.sent);
        return false;
      });
      expect(sent).toHaveLength(2);
      for (const packet of sent) {
        expect(new Set(startupParameterNames(packet))).toEqual(
          new Set(["user", "database", "client_encoding"]),
        );
      }
    } finally {
      await pool.end();
      await proxy.close();
    }
  });

  it("a pooled call runs with them from its connection's first statement", async () => {
    const pool = openPool(server.url);
    try {
      const shown = await pool.query("SHOW statement_timeout");
      expect(shown.rows).toEqual([{ statement_timeout: "10s" }]);
    } finally {
      await pool.end();
    }
  });
});
