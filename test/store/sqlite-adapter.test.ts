/**
 * The grouped SQLite adapter and the SQLite store on it: concurrent calls share statements, writes
 * keep their order, a setMany is all or nothing, insert-if-absent is atomic across connections,
 * and closing the store lets calls already made finish.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import sqlite3 from "sqlite3";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { GroupedSqliteAdapter } from "../../src/store/backends/sqlite-adapter.js";
import { createStore } from "../../src/store/create-store.js";
import { setAll } from "../../src/store/store.js";

/** Run one statement on a separate connection to the file. */
function rawExec(file: string, sql: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(file, (openError) => {
      if (openError) return reject(openError);
      db.exec(sql, (error) => {
        db.close();
        if (error) reject(error);
        else resolve();
      });
    });
  });
}

describe("GroupedSqliteAdapter", () => {
  let root: string;
  let adapter: GroupedSqliteAdapter;
  let statements: string[];
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "coworker-grouped-"));
    adapter = new GroupedSqliteAdapter({ uri: `sqlite://${path.join(root, "db.sqlite")}`, table: "keyv" });
    const query = adapter.query;
    statements = [];
    adapter.query = (sql: string, ...parameters: unknown[]) => {
      statements.push(sql.split(" ").slice(0, 2).join(" "));
      return query(sql, ...parameters);
    };
  });
  afterEach(async () => {
    await adapter.disconnect();
    await rm(root, { recursive: true, force: true });
  });

  it("sends concurrent writes as one statement and concurrent reads as another", async () => {
    await Promise.all(Array.from({ length: 20 }, (_, i) => adapter.set(`k${i}`, `v${i}`)));
    expect(statements).toEqual(["INSERT INTO"]);
    const values = await Promise.all([
      ...Array.from({ length: 20 }, (_, i) => adapter.get(`k${i}`)),
      adapter.get("k3"),
      adapter.get("none"),
    ]);
    expect(values).toEqual([...Array.from({ length: 20 }, (_, i) => `v${i}`), "v3", undefined]);
    expect(statements).toEqual(["INSERT INTO", "SELECT key,"]);
  });

  it("keeps the order of writes issued together: later writes win, a delete sees the write before it", async () => {
    const results = await Promise.all([
      adapter.set("a", "1"),
      adapter.delete("a"),
      adapter.delete("a"),
      adapter.set("a", "2"),
      adapter.set("b", "1"),
      adapter.setMany([
        { key: "b", value: "2" },
        { key: "c", value: "3" },
      ]),
      adapter.delete("missing"),
    ]);
    expect(results).toEqual([undefined, true, false, undefined, undefined, undefined, false]);
    expect(await Promise.all(["a", "b", "c"].map((key) => adapter.get(key)))).toEqual(["2", "2", "3"]);
  });

  it("inserts if absent: first of a batch wins, live rows stay, expired rows are taken over", async () => {
    const live = JSON.stringify({ value: "live", expires: Date.now() + 60_000 });
    const expired = JSON.stringify({ value: "old", expires: Date.now() - 1 });
    await adapter.setMany([
      { key: "live", value: live },
      { key: "expired", value: expired },
    ]);
    const fresh = JSON.stringify({ value: "new" });
    expect(
      await Promise.all([
        adapter.insertIfAbsent("new", fresh),
        adapter.insertIfAbsent("new", JSON.stringify({ value: "second" })),
        adapter.insertIfAbsent("live", fresh),
        adapter.insertIfAbsent("expired", fresh),
      ]),
    ).toEqual([true, false, false, true]);
    expect(await Promise.all(["new", "live", "expired"].map((key) => adapter.get(key)))).toEqual([
      fresh,
      live,
      fresh,
    ]);
  });

  it("commits a setMany all or nothing, and a failing write never fails the writes grouped with it", async () => {
    await adapter.set("warm", "up");
    await rawExec(
      path.join(root, "db.sqlite"),
      "CREATE TRIGGER refuse BEFORE INSERT ON keyv WHEN NEW.key = 'boom' BEGIN SELECT RAISE(ABORT, 'refused'); END;",
    );
    const outcomes = await Promise.allSettled([
      adapter.set("before", "1"),
      adapter.setMany([
        { key: "part", value: "1" },
        { key: "boom", value: "1" },
      ]),
      adapter.set("after", "1"),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((outcomes[1] as PromiseRejectedResult).reason.message).toMatch(/refused/);
    expect(await Promise.all(["before", "part", "boom", "after"].map((key) => adapter.get(key)))).toEqual([
      "1",
      undefined,
      undefined,
      "1",
    ]);
  });
});

describe("SQLite store on the grouped adapter", () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), "coworker-sqlite-store-"));
  });
  afterEach(async () => {
    vi.useRealTimers();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("setIfAbsent stays atomic between two stores on separate connections to one file", async () => {
    const first = await createStore({ dataDir });
    const second = await createStore({ dataDir });
    try {
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, caller) =>
          (caller % 2 === 0 ? first : second).space("dedupe").setIfAbsent("event-1", { caller }, 60_000),
        ),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      const winner = results.indexOf(true);
      expect(await second.space("dedupe").get("event-1")).toEqual({ caller: winner });
      expect(await first.space("dedupe").get("event-1")).toEqual({ caller: winner });
    } finally {
      await first.close();
      await second.close();
    }
  });

  it("finishes calls already made when it closes", async () => {
    const store = await createStore({ dataDir });
    const space = store.space("sessions");
    await space.set("expired", "gone", 60_000);
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 61_000);
    // Reading an expired key deletes it: a read, then a write, both after close() was called.
    const read = space.get("expired");
    const writes = [
      space.set("one", 1),
      setAll(space, [
        { key: "two", value: 2 },
        { key: "three", value: 3 },
      ]),
      space.setIfAbsent("four", 4),
    ];
    await store.close();
    vi.useRealTimers();
    await expect(read).resolves.toBeUndefined();
    await expect(Promise.all(writes)).resolves.toEqual([undefined, undefined, true]);
    await expect(space.get("one")).rejects.toThrow(/is closed/);
    const reopened = await createStore({ dataDir });
    const again = reopened.space("sessions");
    expect(await Promise.all(["one", "two", "three", "four"].map((key) => again.get(key)))).toEqual([
      1, 2, 3, 4,
    ]);
    await reopened.close();
  });
});
