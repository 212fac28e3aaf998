/**
 * Postgres selection. No Postgres server runs here, so @keyv/postgres is replaced by a recording
 * fake: these tests prove that postgres:// and postgresql:// URLs construct the Postgres adapter
 * with the URL, share it across namespaces, and report failures without credentials. They do not
 * prove SQL behaviour against a real server.
 */
import os from "node:os";
import { afterEach, describe, expect, it, vi } from "vitest";

const fake = vi.hoisted(() => ({
  constructed: [] as Array<Record<string, unknown>>,
  queries: [] as string[],
  failWith: undefined as Error | undefined,
  disconnects: 0,
}));

vi.mock("@keyv/postgres", async () => {
  const { EventEmitter } = await import("node:events");
  class FakeKeyvPostgres extends EventEmitter {
    readonly opts: Record<string, unknown>;
    namespace?: string;
    private readonly rows = new Map<string, unknown>();
    constructor(options: Record<string, unknown>) {
      super();
      this.opts = { ...options };
      fake.constructed.push(this.opts);
    }
    async query(sql: string): Promise<unknown[]> {
      fake.queries.push(sql);
      if (fake.failWith) throw fake.failWith;
      return [{ "?column?": 1 }];
    }
    async get(key: string) {
      return this.rows.get(key);
    }
    async set(key: string, value: unknown) {
      this.rows.set(key, value);
    }
    async delete(key: string) {
      return this.rows.delete(key);
    }
    async clear() {
      this.rows.clear();
    }
    async disconnect() {
      fake.disconnects += 1;
    }
  }
  return { KeyvPostgres: FakeKeyvPostgres, default: FakeKeyvPostgres };
});

const { createStore } = await import("../../src/store/create-store.js");

afterEach(() => {
  fake.constructed.length = 0;
  fake.queries.length = 0;
  fake.failWith = undefined;
  fake.disconnects = 0;
});

describe("postgres store selection (adapter faked: no server here)", () => {
  it.each(["postgres", "postgresql"])(
    "%s:// constructs one @keyv/postgres adapter with the URL",
    async (scheme) => {
      const url = `${scheme}://bot:s3cret@db.internal:5432/coworker`;
      const store = await createStore({ url, dataDir: os.tmpdir() });
      expect(fake.constructed).toEqual([{ uri: url }]);
      expect(fake.queries).toEqual(["SELECT 1"]);
      expect(store.description).toBe(`${scheme}://db.internal:5432/coworker`);
      await store.space("sessions").set("k", "session");
      await store.space("approvals").set("k", "approval");
      expect(await store.space("sessions").get("k")).toBe("session");
      expect(await store.space("approvals").get("k")).toBe("approval");
      expect(await store.ping()).toBe(true);
      await store.close();
      expect(fake.disconnects).toBe(1);
    },
  );

  it("reports an unreachable server without the password and releases the pool", async () => {
    fake.failWith = new Error("connect ECONNREFUSED 10.0.0.5:5432");
    await expect(
      createStore({ url: "postgres://bot:s3cret@db.internal:5432/coworker", dataDir: os.tmpdir() }),
    ).rejects.toThrow(
      "cannot reach the Postgres store at postgres://db.internal:5432/coworker: connect ECONNREFUSED 10.0.0.5:5432",
    );
    expect(fake.disconnects).toBe(1);
  });
});
