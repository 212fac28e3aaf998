/**
 * The embedded SQLite store: where its file lives, purging of expired rows (between loop turns),
 * and opening: a lock another connection holds on the file is waited out, failures are clear.
 */
import { mkdir, mkdtemp, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { openSqliteBackend } from "../../src/store/backends/sqlite.js";
import { createStore } from "../../src/store/create-store.js";

/** Rows of the store's table, read straight from the file. */
function rawQuery(file: string, sql: string): Array<Record<string, unknown>> {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare(sql).all() as Array<Record<string, unknown>>;
  } finally {
    db.close();
  }
}

describe("sqlite store", () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "coworker-sqlite-"));
  });
  afterEach(async () => {
    vi.useRealTimers();
    await rm(root, { recursive: true, force: true });
  });

  it("creates a missing data dir and keeps namespaced rows in <dataDir>/coworker.sqlite (WAL mode)", async () => {
    const dataDir = path.join(root, "nested", "data");
    const store = await createStore({ dataDir });
    const file = path.join(dataDir, "coworker.sqlite");
    expect(store.description).toBe(`sqlite:${file}`);
    await store.space("sessions").set("s1", { ok: true });
    await store.close();
    expect((await stat(file)).isFile()).toBe(true);
    expect(rawQuery(file, "SELECT key, value FROM keyv")).toEqual([
      { key: "sessions:s1", value: JSON.stringify({ value: { ok: true } }) },
    ]);
    expect(rawQuery(file, "PRAGMA journal_mode")).toEqual([{ journal_mode: "wal" }]);
  });

  it("lets every call made before close finish (the connection drains its queue), so each settles and every write is in the file", async () => {
    const store = await createStore({ dataDir: root });
    const sessions = store.space("sessions");
    await sessions.set("gone", 1);
    const calls = [
      sessions.set("a", 1),
      sessions.setMany!([
        { key: "b", value: 2 },
        { key: "c", value: 3 },
      ]),
      store.space("dedupe").setIfAbsent("d", true, 60_000),
      sessions.replaceIf("a", 1, 4),
      sessions.delete("gone"),
      sessions.get("b"),
    ];
    // Each call's outcome as it settles: "pending" for one that has not when close resolves.
    const outcomes: unknown[] = calls.map(() => "pending");
    for (const [at, call] of calls.entries()) {
      call.then(
        (value) => (outcomes[at] = { value }),
        (error) => (outcomes[at] = { error }),
      );
    }
    await store.close();
    expect(outcomes).toEqual([
      { value: undefined },
      { value: undefined },
      { value: true },
      { value: true },
      { value: true },
      { value: 2 },
    ]);
    const file = path.join(root, "coworker.sqlite");
    expect(rawQuery(file, "SELECT key FROM keyv ORDER BY key")).toEqual([
      { key: "dedupe:d" },
      { key: "sessions:a" },
      { key: "sessions:b" },
      { key: "sessions:c" },
    ]);
  });

  it("purges rows past their TTL when the store opens", async () => {
    const store = await createStore({ dataDir: root });
    await store.space("dedupe").set("old-event", true, 60_000);
    await store.space("dedupe").set("kept", true);
    await store.close();
    const file = path.join(root, "coworker.sqlite");
    expect(rawQuery(file, "SELECT key FROM keyv ORDER BY key")).toHaveLength(2);
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 61_000);
    const reopened = await createStore({ dataDir: root });
    await reopened.close();
    expect(rawQuery(file, "SELECT key FROM keyv")).toEqual([{ key: "dedupe:kept" }]);
  });

  it("purges expired rows a window at a time, with other work between windows, and keeps live rows", async () => {
    await (await createStore({ dataDir: root })).close();
    const file = path.join(root, "coworker.sqlite");
    const db = new Database(file);
    const insert = db.prepare("INSERT INTO keyv (key, value) VALUES (?, ?)");
    const expired = JSON.stringify({ value: 1, expires: Date.now() - 1 });
    const live = JSON.stringify({ value: 2, expires: Date.now() + 3_600_000 });
    db.transaction(() => {
      for (let i = 0; i < 10_000; i += 1) {
        insert.run(`dedupe:old${i}`, expired);
        if (i % 1_000 === 0) insert.run(`dedupe:live${i}`, live);
      }
      insert.run("memory:forever", JSON.stringify({ value: 3 }));
    })();
    db.close();
    const observer = new Database(file, { readonly: true });
    const countExpired = observer.prepare("SELECT count(*) FROM keyv WHERE key LIKE 'dedupe:old%'").pluck();
    const seen: number[] = [];
    let watching = true;
    const watch = (): void => {
      if (!watching) return;
      seen.push(countExpired.get() as number);
      setImmediate(watch);
    };
    setImmediate(watch);
    const store = await createStore({ dataDir: root });
    watching = false;
    observer.close();
    await store.close();
    expect(seen.some((remaining) => remaining > 0 && remaining < 10_000)).toBe(true);
    expect(rawQuery(file, "SELECT key FROM keyv ORDER BY key").map((row) => row.key)).toEqual([
      ...Array.from({ length: 10 }, (_, n) => `dedupe:live${n * 1_000}`).sort(),
      "memory:forever",
    ]);
  });

  it("a row that is not JSON fails its read with an error naming its key and namespace, not quoting its value", async () => {
    const store = await createStore({ dataDir: root });
    await store.space("memory").set("fine", { ok: true });
    await store.close();
    const file = path.join(root, "coworker.sqlite");
    const db = new Database(file);
    db.prepare("INSERT INTO keyv (key, value) VALUES ('memory:mangled', 'secret-ish {')").run();
    db.close();
    const reopened = await createStore({ dataDir: root });
    try {
      const failure = await reopened
        .space("memory")
        .get("mangled")
        .then(
          () => undefined,
          (error: unknown) => error as Error,
        );
      expect(failure?.name).toBe("StoredDataError");
      expect(failure?.message).toBe(
        "stored entry mangled in memory is not JSON: it was not written by Coworker, or it is corrupt",
      );
      expect(failure?.cause).toBeUndefined();
      expect(await reopened.space("memory").get("fine")).toEqual({ ok: true });
    } finally {
      await reopened.close();
    }
  });

  it("waits out another connection's lock on the whole file while opening, the event loop running meanwhile", async () => {
    const file = path.join(root, "coworker.sqlite");
    await (await createStore({ dataDir: root })).close();
    // A sqlite3 shell in exclusive locking mode holds the whole file once it has read it.
    const locker = new Database(file, { timeout: 0 });
    locker.pragma("locking_mode = EXCLUSIVE");
    locker.prepare("SELECT count(*) FROM keyv").get();
    // Opening finds the file locked; it used to wait for it on the main thread, so this very
    // thread could not let go of the lock before opening failed.
    const opening = openSqliteBackend(file, () => undefined);
    locker.close();
    const backend = await opening;
    try {
      await backend.keyv("sessions").set("s1", "ok");
      expect(await backend.keyv("sessions").get("s1")).toBe("ok");
    } finally {
      await backend.close();
    }
  });

  it("reads go on while another connection holds the write lock or tries to take the whole file", async () => {
    const file = path.join(root, "coworker.sqlite");
    const store = await createStore({ dataDir: root });
    const other = new Database(file, { timeout: 0 });
    try {
      await store.space("sessions").set("s1", "ok");
      // Open, the store holds a shared lock on the file (WAL mode): no one can take the whole file.
      other.pragma("locking_mode = EXCLUSIVE");
      expect(() => other.prepare("SELECT count(*) FROM keyv").get()).toThrow(
        expect.objectContaining({ code: "SQLITE_BUSY" }),
      );
      other.pragma("locking_mode = NORMAL");
      // A writer's lock (BEGIN EXCLUSIVE is BEGIN IMMEDIATE in WAL mode) leaves readers alone.
      other.exec("BEGIN EXCLUSIVE");
      expect(await store.space("sessions").get("s1")).toBe("ok");
      other.exec("ROLLBACK");
    } finally {
      other.close();
      await store.close();
    }
  });

  it("fails with a clear error naming the file when SQLite cannot open it", async () => {
    await mkdir(path.join(root, "coworker.sqlite"));
    await expect(createStore({ dataDir: root })).rejects.toThrow(
      `cannot open the SQLite store at ${path.join(root, "coworker.sqlite")}: `,
    );
  });
});
