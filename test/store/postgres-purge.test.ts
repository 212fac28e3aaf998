/**
 * The Postgres store purges expired rows one window of keys at a time, on a real PostgreSQL: a
 * table of many rows is walked in statements that each look at no more than the window's rows (a
 * whole-table DELETE took 13-16 s at 300,000 rows of 4 KB, past the pool's reply timeout, so the
 * store would not open and the hourly purge never succeeded), every expired row goes, live rows,
 * rows without expiry and rows that are not JSON stay, and closing the table stops the walk.
 */
import pg from "pg";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { PostgresTable } from "../../src/store/backends/postgres-table.js";
import { type PostgresServer, startPostgresServer } from "../support/postgres-server.js";

const TABLE = "public.purge_walk";
const WINDOW = 1_000;
/** Half expired, half live: twenty windows. */
const ROWS = 20_000;

let server: PostgresServer;
let admin: pg.Client;
beforeAll(async () => {
  server = await startPostgresServer();
  admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
}, 120_000);
afterAll(async () => {
  await admin?.end();
  await server?.stop();
});

/** The table's DELETE statements, with their parameters, as the table sent them. */
let deletes: unknown[][];
let pool: pg.Pool;
let table: PostgresTable;
beforeEach(async () => {
  await admin.query(`DROP TABLE IF EXISTS ${TABLE}`);
  pool = new pg.Pool({ connectionString: server.url });
  deletes = [];
  pool.on("connect", (client) => {
    const query = client.query.bind(client) as (sql: string, ...rest: unknown[]) => unknown;
    (client as { query: unknown }).query = (sql: string, ...rest: unknown[]) => {
      if (typeof sql === "string" && sql.trimStart().startsWith("DELETE"))
        deletes.push((rest[0] as unknown[]) ?? []);
      return query(sql, ...rest);
    };
  });
  table = new PostgresTable(pool, TABLE, "test", WINDOW);
  await table.ensureTable();
  // Even rows expired, odd rows live, as keyv writes them; one row without expiry, one not JSON.
  await admin.query(
    `INSERT INTO ${TABLE} SELECT 'ns:k' || g, '{"value":"' || repeat('x', 100) || '","expires":' ||
       CASE WHEN g % 2 = 0 THEN '1' ELSE '99999999999999' END || '}' FROM generate_series(1, $1) g`,
    [ROWS],
  );
  await admin.query(`INSERT INTO ${TABLE} VALUES ('ns:forever', '{"value":1}'), ('other:row', 'not json {')`);
});
afterEach(async () => {
  await table.disconnect().catch(() => undefined);
});

async function count(where: string): Promise<number> {
  const { rows } = await admin.query(`SELECT count(*)::int AS n FROM ${TABLE} WHERE ${where}`);
  return rows[0].n;
}

describe("postgres store: purge of expired rows", () => {
  it("walks the whole table a window at a time: every expired row goes, the rest stay", async () => {
    await admin.query(`CREATE TABLE ${TABLE}_before AS SELECT key FROM ${TABLE}`);
    try {
      const run = await table.startPurge(Date.now());
      await run.rest;

      expect(await count("value LIKE '%\"expires\":1}'")).toBe(0);
      expect(await count("TRUE")).toBe(ROWS / 2 + 2);
      expect(await count("key IN ('ns:forever', 'other:row')")).toBe(2);
      // Every key of the table was in one window, and no window held more rows than the limit.
      expect(deletes.length).toBeGreaterThanOrEqual(Math.ceil((ROWS + 2) / WINDOW));
      for (const [, last, after] of deletes) {
        const bounds = after === undefined ? [last] : [last, after];
        const range = after === undefined ? "key <= $1" : "key <= $1 AND key > $2";
        const { rows } = await admin.query(
          `SELECT count(*)::int AS n FROM ${TABLE}_before WHERE ${range}`,
          bounds,
        );
        expect(rows[0].n).toBeLessThanOrEqual(WINDOW);
      }
      const lasts = deletes.map(([, last]) => last as string);
      const { rows: ends } = await admin.query(`SELECT max(key) AS last FROM ${TABLE}_before`);
      expect(lasts.at(-1)).toBe(ends[0].last);
    } finally {
      await admin.query(`DROP TABLE ${TABLE}_before`);
    }
  });

  it("resolves after the first window, and closing the table stops the rest of the walk", async () => {
    const run = await table.startPurge(Date.now());
    await table.disconnect();
    await run.rest;

    // At most the first window and the one in flight at the close were purged.
    expect(deletes.length).toBeLessThanOrEqual(2);
    expect(await count("value LIKE '%\"expires\":1}'")).toBeGreaterThanOrEqual(ROWS / 2 - 2 * WINDOW);
  });
});
