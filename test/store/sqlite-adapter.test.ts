/**
 * The SQLite adapter and the SQLite store on it: the writes of one loop turn share one commit,
 * calls keep their order (a read sees every write issued before it), a setMany is all or nothing,
 * insert-if-absent is atomic across connections, another connection's write lock is waited out
 * without stalling the event loop (and fails the writes at the deadline), and closing the store
 * lets calls already made finish.
 */
import { statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MAX_ROWS_PER_WRITE, SqliteAdapter } from "../../src/store/backends/sqlite-adapter.js";
import { createStore } from "../../src/store/create-store.js";
import { setAll } from "../../src/store/store.js";

/** Run one statement on a separate connection to the file. */
function rawExec(file: string, sql: string): void {
  const db = new Database(file);
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
}

/** The write-ahead log's size: each commit appends the pages it changed (nothing checkpoints it here). */
function walBytes(file: string): number {
  return statSync(`${file}-wal`).size;
}

describe("SqliteAdapter", () => {
  let root: string;
  let file: string;
  let adapter: SqliteAdapter;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "coworker-sqlite-adapter-"));
    file = path.join(root, "db.sqlite");
    adapter = new SqliteAdapter({ file, table: "keyv", busyTimeoutMs: 1_000, synchronous: "NORMAL" });
  });
  afterEach(async () => {
    await adapter.disconnect();
    await rm(root, { recursive: true, force: true });
  });

  it("refuses a setMany over the row limit with a clear error, writing nothing", async () => {
    const entries = Array.from({ length: MAX_ROWS_PER_WRITE + 1 }, (_, n) => ({ key: `k${n}`, value: "v" }));
    const refused = adapter.setMany(entries);
    await expect(refused).rejects.toThrow(/at most 16000 entries, got 16001/);
    expect(await adapter.get("k0")).toBeUndefined();
  });

  it("commits the writes issued in one loop turn together, and a read sees the writes issued before it", async () => {
    await adapter.set("warm", "up");
    const before = walBytes(file);
    const writes = Array.from({ length: 20 }, (_, i) => adapter.set(`k${i}`, `v${i}`));
    const read = adapter.get("k7");
    await Promise.all(writes);
    expect(await read).toBe("v7");
    const grouped = walBytes(file) - before;
    for (let i = 0; i < 20; i += 1) await adapter.set(`k${i}`, `again${i}`);
    expect(walBytes(file) - before - grouped).toBeGreaterThan(grouped);
    expect(await adapter.getMany(["k3", "none"])).toEqual(["again3", undefined]);
  });

  it("a read of a key with no write queued leaves the loop turn's batch whole (one commit)", async () => {
    await adapter.set("other", "committed");
    await Promise.all(Array.from({ length: 20 }, (_, i) => adapter.set(`k${i}`, "first")));
    const before = walBytes(file);
    await Promise.all(Array.from({ length: 20 }, (_, i) => adapter.set(`k${i}`, "second")));
    const oneCommit = walBytes(file) - before;
    const writes = Array.from({ length: 20 }, (_, i) => adapter.set(`k${i}`, "third"));
    const other = adapter.get("other");
    writes.push(...Array.from({ length: 20 }, (_, i) => adapter.set(`k${i}`, "fourth")));
    expect(await other).toBe("committed");
    await Promise.all(writes);
    expect(walBytes(file) - before - oneCommit).toBe(oneCommit);
    expect(await adapter.get("k3")).toBe("fourth");
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
    expect(results).toEqual([true, true, false, true, true, undefined, false]);
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
    rawExec(
      file,
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

  it("waits out another connection's write lock between loop turns, then commits the writes a read waited for", async () => {
    await adapter.disconnect();
    adapter = new SqliteAdapter({ file, table: "keyv", busyTimeoutMs: 5_000, synchronous: "NORMAL" });
    await adapter.set("a", "0");
    const other = new Database(file);
    other.exec("BEGIN IMMEDIATE");
    let settled = false;
    const writes = Promise.all([adapter.set("a", "1"), adapter.setMany([{ key: "b", value: "2" }])]);
    const markSettled = (): void => {
      settled = true;
    };
    writes.then(markSettled, markSettled);
    const read = adapter.get("a");
    let ticks = 0;
    const settledWhileLocked = await new Promise<boolean>((resolve) => {
      const timer = setInterval(() => {
        ticks += 1;
        if (ticks < 10) return;
        clearInterval(timer);
        resolve(settled);
        other.exec("ROLLBACK");
        other.close();
      }, 1);
    });
    expect(settledWhileLocked).toBe(false);
    await expect(writes).resolves.toEqual([true, undefined]);
    expect(await read).toBe("1");
    expect(await adapter.get("b")).toBe("2");
  });

  it("fails the queued writes with an error naming the file once the lock is held past busyTimeoutMs", async () => {
    await adapter.disconnect();
    adapter = new SqliteAdapter({ file, table: "keyv", busyTimeoutMs: 200, synchronous: "NORMAL" });
    await adapter.set("a", "0");
    const other = new Database(file);
    other.exec("BEGIN IMMEDIATE");
    let ticks = 0;
    const timer = setInterval(() => {
      ticks += 1;
    }, 1);
    const outcomes = await Promise.allSettled([adapter.set("a", "1"), adapter.delete("a")]);
    clearInterval(timer);
    other.exec("ROLLBACK");
    other.close();
    expect(ticks).toBeGreaterThan(0);
    for (const outcome of outcomes) {
      expect(outcome.status).toBe("rejected");
      expect((outcome as PromiseRejectedResult).reason.message).toBe(
        `store: the SQLite file ${file} stayed locked by another connection (a second Coworker process, ` +
          "a sqlite3 shell, coworker doctor) for 200 ms; the write was not made",
      );
    }
    expect(await adapter.get("a")).toBe("0");
    expect(await adapter.set("a", "2")).toBe(true);
    expect(await adapter.get("a")).toBe("2");
  });

  it("gives up a write another connection's lock still holds a few seconds into a close, within shutdown's budget", async () => {
    await adapter.disconnect();
    adapter = new SqliteAdapter({ file, table: "keyv", busyTimeoutMs: 200_000, synchronous: "NORMAL" });
    await adapter.set("a", "0");
    const other = new Database(file);
    other.exec("BEGIN IMMEDIATE");
    const write = adapter.set("a", "1");
    const closed = adapter.disconnect();
    await expect(write).rejects.toThrow(
      `store: the SQLite file ${file} stayed locked by another connection (a second Coworker process, ` +
        "a sqlite3 shell, coworker doctor) until the store closed; the write was not made",
    );
    await closed;
    other.exec("ROLLBACK");
    other.close();
    adapter = new SqliteAdapter({ file, table: "keyv", busyTimeoutMs: 1_000, synchronous: "NORMAL" });
    expect(await adapter.get("a")).toBe("0");
  });

  it("commits the writes still queued when it closes", async () => {
    const write = adapter.set("last", "word");
    await adapter.disconnect();
    await expect(write).resolves.toBe(true);
    adapter = new SqliteAdapter({ file, table: "keyv", busyTimeoutMs: 1_000, synchronous: "NORMAL" });
    expect(await adapter.get("last")).toBe("word");
  });
});

describe("SQLite store on the adapter", () => {
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
