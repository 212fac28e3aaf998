/**
 * Store contract: one suite run against every backend we can host here — the embedded SQLite
 * file, a real redis-server and a real PostgreSQL server on loopback ports, and the in-memory Map.
 * Redis and PostgreSQL must be installed (`npm test`'s pretest step installs them as root):
 * without them their suites fail with install instructions.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createClient } from "@keyv/redis";
import Database from "better-sqlite3";
import { Keyv } from "keyv";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createStore } from "../../src/store/create-store.js";
import { JsonText } from "../../src/store/json-text.js";
import {
  getAll,
  type KeyValueSpace,
  readRows,
  type Store,
  type StoreNamespace,
  setAll,
} from "../../src/store/store.js";
import { RowText, UnreadableRow } from "../../src/store/stored-row.js";
import { type PostgresServer, startPostgresServer } from "../support/postgres-server.js";
import { type RedisServer, startRedisServer } from "../support/redis-server.js";
import { eventually } from "../support/eventually.js";

interface Backend {
  readonly name: string;
  /** Whether data survives close + reopen. */
  readonly persistent: boolean;
  setup(): Promise<void>;
  open(): Promise<Store>;
  /** Store `text` as the row of `key` in `namespace` by another path than `store` (another program's write). */
  writeRow(store: Store, namespace: StoreNamespace, key: string, text: string): Promise<void>;
  teardown(): Promise<void>;
}

/** Poll until `condition` holds (bounded), for effects that take wall-clock time such as expiry. */

function sqliteBackend(): Backend {
  let dataDir = "";
  return {
    name: "sqlite file",
    persistent: true,
    setup: async () => {
      dataDir = await mkdtemp(path.join(os.tmpdir(), "coworker-store-"));
    },
    open: () => createStore({ dataDir }),
    writeRow: async (_, namespace, key, text) => {
      const db = new Database(path.join(dataDir, "coworker.sqlite"));
      try {
        db.prepare(
          "INSERT INTO keyv (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        ).run(`${namespace}:${key}`, text);
      } finally {
        db.close();
      }
    },
    teardown: () => rm(dataDir, { recursive: true, force: true }),
  };
}

function redisBackend(): Backend {
  let server: RedisServer | undefined;
  return {
    name: "redis-server",
    persistent: true,
    setup: async () => {
      server = await startRedisServer();
    },
    open: () => {
      if (!server) throw new Error("redis-server did not start (see the setup error above)");
      return createStore({ url: server.url, dataDir: os.tmpdir() });
    },
    writeRow: async (_, namespace, key, text) => {
      const raw = createClient({ url: server!.url });
      await raw.connect();
      try {
        await raw.set(`${namespace}::${key}`, text);
      } finally {
        await raw.close();
      }
    },
    teardown: async () => {
      await server?.stop();
    },
  };
}

function postgresBackend(): Backend {
  let server: PostgresServer | undefined;
  return {
    name: "postgresql",
    persistent: true,
    setup: async () => {
      server = await startPostgresServer();
    },
    open: () => {
      if (!server) throw new Error("postgres did not start (see the setup error above)");
      return createStore({ url: server.url, dataDir: os.tmpdir() });
    },
    writeRow: async (_, namespace, key, text) => {
      const client = new pg.Client({ connectionString: server!.url });
      await client.connect();
      try {
        await client.query(
          "INSERT INTO keyv (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
          [`${namespace}:${key}`, text],
        );
      } finally {
        await client.end();
      }
    },
    teardown: async () => {
      await server?.stop();
    },
  };
}

function memoryBackend(): Backend {
  return {
    name: "memory",
    persistent: false,
    setup: async () => undefined,
    open: () => createStore({ url: "memory:", dataDir: os.tmpdir() }),
    // Nothing else reaches this process's Map: the store's own backend, as keyv keeps the rows.
    writeRow: async (store, namespace, key, text) => {
      const held = store as unknown as {
        backend: { keyv(ns: string): { opts: { store: Map<string, string> } } };
      };
      held.backend.keyv(namespace).opts.store.set(`${namespace}:${key}`, text);
    },
    teardown: async () => undefined,
  };
}

const BACKENDS = [sqliteBackend(), redisBackend(), postgresBackend(), memoryBackend()];

describe.each(BACKENDS)("store contract: $name", (backend) => {
  let store: Store;
  let run = 0;
  /** A key unique to this test, so tests sharing one store never see each other's data. */
  const key = (name: string) => `${name}-${run}`;

  beforeAll(async () => {
    await backend.setup();
    store = await backend.open();
  });
  afterAll(async () => {
    await store?.close();
    await backend.teardown();
  });

  it("sets, gets, overwrites and deletes JSON values", async () => {
    run += 1;
    const space = store.space("sessions");
    const value = { text: ":colon-led string", n: 3.5, list: [1, "two", null], nested: { ok: true } };
    expect(await space.get(key("a"))).toBeUndefined();
    await space.set(key("a"), value);
    expect(await space.get(key("a"))).toEqual(value);
    await space.set(key("a"), "replaced");
    expect(await space.get(key("a"))).toBe("replaced");
    await space.set(key("null"), null);
    expect(await space.get(key("null"))).toBeNull();
    expect(await space.delete(key("a"))).toBe(true);
    expect(await space.delete(key("a"))).toBe(false);
    expect(await space.get(key("a"))).toBeUndefined();
  });

  it("keeps namespaces apart", async () => {
    run += 1;
    await store.space("sessions").set(key("shared"), "session value");
    await store.space("approvals").set(key("shared"), "approval value");
    expect(await store.space("sessions").get(key("shared"))).toBe("session value");
    expect(await store.space("approvals").get(key("shared"))).toBe("approval value");
    expect(await store.space("grants").get(key("shared"))).toBeUndefined();
    await store.space("sessions").delete(key("shared"));
    expect(await store.space("approvals").get(key("shared"))).toBe("approval value");
    // A compare-and-delete judges and deletes its own namespace's entry only.
    await store.space("grants").set(key("shared"), "approval value");
    expect(await store.space("sessions").deleteIf(key("shared"), "approval value")).toBe(false);
    await store.space("sessions").set(key("shared"), "session value");
    expect(await store.space("sessions").deleteIf(key("shared"), "approval value")).toBe(false);
    expect(await store.space("approvals").deleteIf(key("shared"), "approval value")).toBe(true);
    expect(await store.space("approvals").get(key("shared"))).toBeUndefined();
    expect(await store.space("grants").get(key("shared"))).toBe("approval value");
    expect(await store.space("sessions").get(key("shared"))).toBe("session value");
  });

  it("does not return values past their TTL, and setIfAbsent may then write again", async () => {
    run += 1;
    const space = store.space("dedupe");
    await space.set(key("long"), "stays", 60_000);
    await space.set(key("short"), "goes", 150);
    // A TTL no pause outlasts, so the second call finds the first; its expiry is then reached by
    // moving this process's clock, by which setIfAbsent judges it.
    expect(await space.setIfAbsent(key("once"), "first", 60_000)).toBe(true);
    expect(await space.setIfAbsent(key("once"), "second", 60_000)).toBe(false);
    await eventually(async () => (await space.get(key("short"))) === undefined, "the short TTL to expire");
    expect(await space.get(key("long"))).toBe("stays");
    const start = Date.now();
    vi.useFakeTimers({ toFake: ["Date"], now: start + 50_000 });
    try {
      expect(await space.get(key("once"))).toBe("first");
      expect(await space.setIfAbsent(key("once"), "second", 60_000)).toBe(false);
      vi.setSystemTime(start + 120_000);
      expect(await space.get(key("once"))).toBeUndefined();
      expect(await space.setIfAbsent(key("once"), "third")).toBe(true);
      expect(await space.get(key("once"))).toBe("third");
    } finally {
      vi.useRealTimers();
    }
  });

  it("a read that finds a value expired never removes a write made meanwhile", async () => {
    run += 1;
    const space = store.space("dedupe");
    await space.set(key("renewed"), "old", 60_000);
    await space.set(key("claimed"), "old", 60_000);
    // This process's clock past the TTLs (the server's may not be: Redis still holds the keys).
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 120_000 });
    try {
      await Promise.all([space.get(key("renewed")), space.set(key("renewed"), "new", 60_000)]);
      expect(await space.get(key("renewed"))).toBe("new");
      await Promise.all([space.get(key("claimed")), space.setIfAbsent(key("claimed"), "first", 60_000)]);
      expect(await space.setIfAbsent(key("claimed"), "second", 60_000)).toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });

  it("setIfAbsent writes over an entry this process's clock finds expired, though the server may still hold it", async () => {
    run += 1;
    const space = store.space("dedupe");
    expect(await space.setIfAbsent(key("lapsed"), "first", 60_000)).toBe(true);
    await space.set(key("lapsed-set"), "old", 60_000);
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 120_000 });
    try {
      for (const lapsed of [key("lapsed"), key("lapsed-set")]) {
        expect(await space.get(lapsed)).toBeUndefined();
        expect(await space.setIfAbsent(lapsed, "again", 60_000)).toBe(true);
        expect(await space.get(lapsed)).toBe("again");
        expect(await space.setIfAbsent(lapsed, "third", 60_000)).toBe(false);
      }
    } finally {
      vi.useRealTimers();
    }
  });

  it("keys that begin with the namespace's name are keys like any other", async () => {
    run += 1;
    const space = store.space("sessions");
    await space.set(key("plain"), "plain");
    expect(await space.get(`sessions:${key("plain")}`)).toBeUndefined();
    await space.set(`sessions:${key("led")}`, "led");
    expect(await space.get(key("led"))).toBeUndefined();
    expect(await space.getMany!([`sessions:${key("led")}`])).toEqual(["led"]);
    expect(await space.setIfAbsent(`sessions:${key("plain")}`, "other")).toBe(true);
    expect(await space.get(key("plain"))).toBe("plain");
  });

  it("setIfAbsent: of 20 concurrent callers exactly one wins, and its value is stored", async () => {
    run += 1;
    const space = store.space("approvals");
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, caller) => space.setIfAbsent(key("press"), { caller })),
    );
    const winners = results.flatMap((won, caller) => (won ? [caller] : []));
    expect(winners).toHaveLength(1);
    expect(await space.get(key("press"))).toEqual({ caller: winners[0] });
    expect(await space.setIfAbsent(key("press"), { caller: 99 })).toBe(false);
    expect(await space.get(key("press"))).toEqual({ caller: winners[0] });
  });

  it("replaceIf writes only over the value read: not over a later write or a delete", async () => {
    run += 1;
    const space = store.space("schedules");
    const read = { v: 1, data: { id: "t1", runs: 0, note: 'é \u2028 "q"', at: 1.5e-7 } };
    expect(await space.replaceIf(key("task"), read, { v: 1, data: { runs: 1 } })).toBe(false);
    expect(await space.get(key("task"))).toBeUndefined();
    await space.set(key("task"), read);
    const asRead = await space.get(key("task"));
    expect(await space.replaceIf(key("task"), asRead, { v: 1, data: { runs: 1 } })).toBe(true);
    expect(await space.get(key("task"))).toEqual({ v: 1, data: { runs: 1 } });
    // Written meanwhile: the value read before is no longer there.
    expect(await space.replaceIf(key("task"), asRead, { v: 1, data: { runs: 2 } })).toBe(false);
    expect(await space.get(key("task"))).toEqual({ v: 1, data: { runs: 1 } });
    // Deleted meanwhile: nothing comes back.
    await space.delete(key("task"));
    expect(await space.replaceIf(key("task"), { v: 1, data: { runs: 1 } }, { v: 1, data: { runs: 3 } })).toBe(
      false,
    );
    expect(await space.get(key("task"))).toBeUndefined();
    await expect(space.replaceIf(key("task"), undefined, 1)).rejects.toThrow(/needs the value expected/);
    await expect(space.replaceIf(key("task"), 1, 2, 0)).rejects.toThrow(/ttlMs .* positive whole number/);
  });

  it("replaceIf matches an entry written with a TTL while it lives, and the value it writes keeps its own TTL or none", async () => {
    run += 1;
    const space = store.space("schedules");
    const read = { v: 1, data: { thread: "17.5", at: 12 } };
    await space.set(key("set"), read, 60_000);
    expect(await space.setIfAbsent(key("claimed"), read, 60_000)).toBe(true);
    await space.setMany!([{ key: key("many"), value: read, ttlMs: 60_000 }]);
    for (const held of [key("set"), key("claimed"), key("many")]) {
      const asRead = await space.get(held);
      // Another value of the same start, written with a TTL: not the one read.
      expect(await space.replaceIf(held, { v: 1, data: { thread: "17.5" } }, "other")).toBe(false);
      expect(await space.replaceIf(held, 12, "other")).toBe(false);
      expect(await space.replaceIf(held, asRead, { v: 1, data: { thread: "18.5", at: 13 } }, 60_000)).toBe(
        true,
      );
      expect(await space.get(held)).toEqual({ v: 1, data: { thread: "18.5", at: 13 } });
      // Written meanwhile: the value read is gone, with its expiry.
      expect(await space.replaceIf(held, asRead, "other")).toBe(false);
    }
    // Over a TTL'd entry, a value without one; over that, one with a TTL.
    expect(await space.replaceIf(key("set"), { v: 1, data: { thread: "18.5", at: 13 } }, "forever")).toBe(
      true,
    );
    expect(
      await space.replaceIf(
        key("claimed"),
        { v: 1, data: { thread: "18.5", at: 13 } },
        "week",
        7 * 86_400_000,
      ),
    ).toBe(true);
    const start = Date.now();
    vi.useFakeTimers({ toFake: ["Date"], now: start + 120_000 });
    try {
      // This process's clock past the first TTLs (the server's may not be: Redis still holds the keys).
      expect(await space.get(key("set"))).toBe("forever");
      expect(await space.get(key("claimed"))).toBe("week");
      expect(await space.get(key("many"))).toBeUndefined();
      expect(await space.replaceIf(key("many"), { v: 1, data: { thread: "18.5", at: 13 } }, "late")).toBe(
        false,
      );
      expect(await space.get(key("many"))).toBeUndefined();
      expect(await space.replaceIf(key("set"), "forever", "still")).toBe(true);
      vi.setSystemTime(start + 8 * 86_400_000);
      expect(await space.get(key("set"))).toBe("still");
      expect(await space.get(key("claimed"))).toBeUndefined();
      expect(await space.replaceIf(key("claimed"), "week", "late")).toBe(false);
      expect(await space.get(key("claimed"))).toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });

  it("deleteIf deletes only the value read, live, with or without a TTL: not a later write or an expired entry", async () => {
    run += 1;
    const space = store.space("dedupe");
    const claim = { owner: "a", kept: false };
    expect(await space.deleteIf(key("plain"), claim)).toBe(false);
    await space.set(key("plain"), claim);
    expect(await space.deleteIf(key("plain"), { owner: "b", kept: false })).toBe(false);
    expect(await space.deleteIf(key("plain"), await space.get(key("plain")))).toBe(true);
    expect(await space.get(key("plain"))).toBeUndefined();
    expect(await space.deleteIf(key("plain"), claim)).toBe(false);
    expect(await space.setIfAbsent(key("ttl"), claim, 60_000)).toBe(true);
    const read = await space.get(key("ttl"));
    // Written meanwhile (another's claim, with its own TTL): not the value read.
    await space.set(key("ttl"), { owner: "b", kept: false }, 60_000);
    expect(await space.deleteIf(key("ttl"), read)).toBe(false);
    expect(await space.get(key("ttl"))).toEqual({ owner: "b", kept: false });
    expect(await space.deleteIf(key("ttl"), { owner: "b", kept: false })).toBe(true);
    expect(await space.get(key("ttl"))).toBeUndefined();
    await space.set(key("lapsed"), claim, 60_000);
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 120_000 });
    try {
      // Expired by this process's clock (the server may still hold it): absent, nothing to delete.
      expect(await space.deleteIf(key("lapsed"), claim)).toBe(false);
      expect(await space.setIfAbsent(key("lapsed"), "next", 60_000)).toBe(true);
      expect(await space.get(key("lapsed"))).toBe("next");
    } finally {
      vi.useRealTimers();
    }
    await expect(space.deleteIf(key("plain"), undefined)).rejects.toThrow(/needs the value expected/);
  });

  it("deleteIf: of 20 concurrent callers over one value read exactly one deletes it", async () => {
    run += 1;
    const space = store.space("dedupe");
    await space.set(key("once"), { n: 0 }, 60_000);
    const read = await space.get(key("once"));
    const results = await Promise.all(Array.from({ length: 20 }, () => space.deleteIf(key("once"), read)));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await space.get(key("once"))).toBeUndefined();
  });

  it("replaceIf's TTL expires the value it wrote", async () => {
    run += 1;
    const space = store.space("schedules");
    await space.set(key("short"), "first");
    expect(await space.replaceIf(key("short"), "first", "goes", 150)).toBe(true);
    await eventually(
      async () => (await space.get(key("short"))) === undefined,
      "the replaceIf TTL to expire",
    );
    expect(await space.replaceIf(key("short"), "goes", "back")).toBe(false);
  });

  it("replaceIf: of 20 concurrent callers over one value read exactly one wins", async () => {
    run += 1;
    const space = store.space("schedules");
    await space.set(key("count"), { n: 0 });
    const read = await space.get(key("count"));
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, caller) => space.replaceIf(key("count"), read, { n: 1, caller })),
    );
    const winners = results.flatMap((won, caller) => (won ? [caller] : []));
    expect(winners).toHaveLength(1);
    expect(await space.get(key("count"))).toEqual({ n: 1, caller: winners[0] });
  });

  it("setMany writes every entry with its TTL, and checks them all before writing any", async () => {
    run += 1;
    const space = store.space("history");
    await space.setMany!([
      { key: key("page"), value: { messages: ["a"] } },
      { key: key("short"), value: "goes", ttlMs: 150 },
      { key: key("head"), value: { count: 1 } },
    ]);
    expect(await space.get(key("page"))).toEqual({ messages: ["a"] });
    expect(await space.get(key("head"))).toEqual({ count: 1 });
    await expect(
      space.setMany!([
        { key: key("page"), value: { messages: ["b"] } },
        { key: "", value: 1 },
      ]),
    ).rejects.toThrow(/key in history must be a string/);
    await expect(space.setMany!([{ key: key("bad-ttl"), value: 1, ttlMs: 0 }])).rejects.toThrow(/ttlMs/);
    expect(await space.get(key("page"))).toEqual({ messages: ["a"] });
    await space.setMany!([]);
    await eventually(async () => (await space.get(key("short"))) === undefined, "the setMany TTL to expire");
  });

  it("a JsonText value is written as its text: read back, and matched by replaceIf, as the value it is the JSON of", async () => {
    run += 1;
    const space = store.space("history");
    const value = { messages: [{ role: "user", content: "hi" }], bytes: 34 };
    await space.set(key("text"), new JsonText(JSON.stringify(value)));
    await space.setMany!([
      { key: key("text-ttl"), value: new JsonText(JSON.stringify(value)), ttlMs: 60_000 },
    ]);
    expect(await space.get(key("text"))).toEqual(value);
    expect(await space.get(key("text-ttl"))).toEqual(value);
    expect(await space.replaceIf(key("text"), value, "next")).toBe(true);
    expect(await space.replaceIf(key("text-ttl"), value, "next")).toBe(true);
    expect(await space.get(key("text-ttl"))).toBe("next");
  });

  it("setMany with one key given twice keeps the last value", async () => {
    run += 1;
    const space = store.space("history");
    await space.setMany!([
      { key: key("twice"), value: "first" },
      { key: key("other"), value: 1 },
      { key: key("twice"), value: "last" },
    ]);
    expect(await space.getMany!([key("twice"), key("other")])).toEqual(["last", 1]);
  });

  it("getMany reads several keys in order: absent and expired keys are undefined", async () => {
    run += 1;
    const space = store.space("dedupe");
    await space.set(key("a"), { n: 1 });
    await space.set(key("gone"), "short", 150);
    await space.set(key("b"), "two");
    expect(await space.getMany!([key("b"), key("missing"), key("a")])).toEqual(["two", undefined, { n: 1 }]);
    await eventually(
      async () => (await space.getMany!([key("gone"), key("a")]))[0] === undefined,
      "the getMany TTL to expire",
    );
    expect(await space.getMany!([])).toEqual([]);
    await expect(space.getMany!([key("a"), ""])).rejects.toThrow(/key in dedupe must be a string/);
  });

  it("reads the rows straight from the backend, never through keyv's reads (its hooks, stats and promise per row)", async () => {
    run += 1;
    const space = store.space("dedupe");
    await space.set(key("a"), { n: 1 }, 60_000);
    const reads = ["get", "getMany", "getRaw", "getManyRaw"].map((method) =>
      vi.spyOn(Keyv.prototype, method as "get"),
    );
    try {
      expect(await space.get(key("a"))).toEqual({ n: 1 });
      expect(await space.getMany!([key("missing"), key("a")])).toEqual([undefined, { n: 1 }]);
      expect(await space.getRows!([key("a")])).toEqual([{ value: { n: 1 }, expected: expect.any(RowText) }]);
      expect(await space.setIfAbsent(key("a"), "again")).toBe(false);
      for (const read of reads) expect(read).not.toHaveBeenCalled();
    } finally {
      for (const read of reads) read.mockRestore();
    }
  });

  it("a row holding no readable value (not JSON, JSON without a value, null) is one UnreadableRow to every read, with its text, and present to setIfAbsent", async () => {
    run += 1;
    const space = store.space("dedupe");
    const rows = { notJson: "not json {", noValue: '{"v":1}', nothing: "null", list: "[1,2]" };
    for (const [name, text] of Object.entries(rows)) await backend.writeRow(store, "dedupe", key(name), text);
    await space.set(key("fine"), { ok: true });
    for (const [name, text] of Object.entries(rows)) {
      const failure = await space.get(key(name)).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(UnreadableRow);
      expect(failure).toMatchObject({
        name: "StoredDataError",
        namespace: "dedupe",
        key: key(name),
        row: { text, expires: undefined },
        message: `stored entry ${key(name)} in dedupe ${name === "notJson" ? "is not JSON" : "holds no value"}: it was not written by Coworker, or it is corrupt`,
      });
      expect((failure as Error).message).not.toContain(text);
      expect(await space.setIfAbsent(key(name), "claimed", 60_000)).toBe(false);
    }
    // getMany fails whole, as before; getRows (and readRows) answer per key.
    await expect(space.getMany!([key("fine"), key("noValue")])).rejects.toBeInstanceOf(UnreadableRow);
    const read = await space.getRows!([key("fine"), key("notJson"), key("missing"), key("nothing")]);
    expect(read[0]).toEqual({ value: { ok: true }, expected: expect.any(RowText) });
    expect(read[1]).toMatchObject({ unreadable: { key: key("notJson") }, expected: { text: "not json {" } });
    expect(read[2]).toBeUndefined();
    expect(read[3]).toMatchObject({ unreadable: { key: key("nothing"), reason: "holds no value" } });
    expect(await readRows(space, [key("list")])).toEqual([
      { unreadable: expect.any(UnreadableRow), expected: new RowText("[1,2]", undefined) },
    ]);
    expect(await space.getRows!([])).toEqual([]);
  });

  it("replaceIf and deleteIf over a row's text (RowText) change that row only while it holds exactly that text, whatever it holds", async () => {
    run += 1;
    const space = store.space("dedupe");
    await backend.writeRow(store, "dedupe", key("notJson"), "not json {");
    await backend.writeRow(store, "dedupe", key("noValue"), '{"v":1}');
    await backend.writeRow(store, "dedupe", key("spaced"), '{"value": {"n": 1}}');
    await backend.writeRow(store, "dedupe", key("nullExpiry"), '{"value":{"n":1},"expires":null}');
    const [notJson, noValue, spaced, nullExpiry] = await space.getRows!(
      ["notJson", "noValue", "spaced", "nullExpiry"].map(key),
    );
    // A row in other text than the store writes reads as its value, but is not matched by it.
    expect(spaced).toMatchObject({ value: { n: 1 } });
    expect(await space.replaceIf(key("spaced"), { n: 1 }, { n: 2 })).toBe(false);
    expect(await space.deleteIf(key("nullExpiry"), { n: 1 })).toBe(false);
    // Not the text held: nothing matches.
    expect(await space.replaceIf(key("notJson"), new RowText("not json", undefined), "mine")).toBe(false);
    expect(await space.replaceIf(key("notJson"), spaced!.expected, "mine")).toBe(false);
    expect(await space.deleteIf(key("missing"), notJson!.expected)).toBe(false);
    // A row's text expects that text alone, never a start followed by an expiry still to come.
    await backend.writeRow(store, "dedupe", key("number"), "9999999999999}");
    expect(await space.replaceIf(key("number"), new RowText("other", undefined), "mine")).toBe(false);
    expect(await space.deleteIf(key("number"), new RowText("", undefined))).toBe(false);
    // The text held: replaced (with the TTL given, or none) or deleted, once.
    expect(await space.replaceIf(key("notJson"), notJson!.expected, "mine", 60_000)).toBe(true);
    expect(await space.get(key("notJson"))).toBe("mine");
    expect(await space.replaceIf(key("notJson"), notJson!.expected, "again")).toBe(false);
    expect(await space.replaceIf(key("spaced"), spaced!.expected, { n: 2 })).toBe(true);
    expect(await space.get(key("spaced"))).toEqual({ n: 2 });
    expect(await space.deleteIf(key("noValue"), noValue!.expected)).toBe(true);
    expect(await space.deleteIf(key("nullExpiry"), nullExpiry!.expected)).toBe(true);
    expect(await space.getMany!(["noValue", "nullExpiry"].map(key))).toEqual([undefined, undefined]);
    expect(await space.deleteIf(key("noValue"), noValue!.expected)).toBe(false);
    // The store's own rows too: matched by their text, so not after a rewrite of the same value.
    await space.set(key("own"), { n: 1 }, 60_000);
    const [own] = await space.getRows!([key("own")]);
    const start = Date.now();
    vi.useFakeTimers({ toFake: ["Date"], now: start + 1_000 });
    try {
      await space.set(key("own"), { n: 1 }, 60_000);
      expect(await space.replaceIf(key("own"), own!.expected, { n: 2 })).toBe(false);
      expect(await space.replaceIf(key("own"), { n: 1 }, { n: 2 }, 60_000)).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it("of 20 concurrent callers replacing one unreadable row by its text exactly one wins", async () => {
    run += 1;
    const space = store.space("dedupe");
    await backend.writeRow(store, "dedupe", key("contested"), "garbage");
    const [read] = await space.getRows!([key("contested")]);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, caller) =>
        space.replaceIf(key("contested"), read!.expected, { caller }),
      ),
    );
    const winners = results.flatMap((won, caller) => (won ? [caller] : []));
    expect(winners).toHaveLength(1);
    expect(await space.get(key("contested"))).toEqual({ caller: winners[0] });
  });

  it("a row's text written with a TTL matches while it lives by this process's clock, and no longer once expired", async () => {
    run += 1;
    const space = store.space("dedupe");
    await space.set(key("live"), "v", 60_000);
    await space.set(key("lapsing"), "v", 60_000);
    await backend.writeRow(store, "dedupe", key("foreign"), `{"v":1,"expires":${Date.now() + 60_000}}`);
    const [live, lapsing, foreign] = await space.getRows!(["live", "lapsing", "foreign"].map(key));
    expect(foreign).toMatchObject({ unreadable: { row: { expires: expect.any(Number) } } });
    expect(await space.replaceIf(key("live"), live!.expected, "next")).toBe(true);
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 120_000 });
    try {
      // Expired by this process's clock (the server may still hold them): absent, nothing matches.
      expect(await space.replaceIf(key("lapsing"), lapsing!.expected, "late")).toBe(false);
      expect(await space.deleteIf(key("foreign"), foreign!.expected)).toBe(false);
      expect(await space.getRows!(["lapsing", "foreign"].map(key))).toEqual([undefined, undefined]);
      expect(await space.setIfAbsent(key("foreign"), "fresh")).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it("rejects bad keys, undefined values and bad TTLs with clear errors", async () => {
    const space = store.space("sessions");
    await expect(space.set("", 1)).rejects.toThrow(/key in sessions must be a string of 1–200 characters/);
    await expect(space.get("k".repeat(201))).rejects.toThrow(/1–200 characters/);
    await expect(space.set("k", undefined)).rejects.toThrow(/cannot store undefined at sessions\/k/);
    for (const ttl of [0, -5, 1.5, Number.POSITIVE_INFINITY]) {
      await expect(space.set("k", 1, ttl)).rejects.toThrow(/ttlMs .* positive whole number/);
      await expect(space.setIfAbsent("k", 1, ttl)).rejects.toThrow(/ttlMs .* positive whole number/);
    }
    expect(() => store.space("nope" as never)).toThrow(/unknown store namespace "nope"; known: sessions, /);
  });

  it("refuses keys no backend stores as given (a lone surrogate, a NUL) with one clear error on every backend", async () => {
    run += 1;
    const space = store.space("sessions");
    const refusal = /key in sessions must be well-formed Unicode text \(no lone surrogate\) without NUL/;
    // Distinct keys that every driver would write as one row ("…\uFFFD"), and a NUL Postgres refuses.
    for (const bad of [key("lone\uD800"), key("lone\uDBFF"), `\uDC00${key("led")}`, key("nul\u0000x")]) {
      await expect(space.set(bad, "v")).rejects.toThrow(refusal);
      await expect(space.setIfAbsent(bad, "v", 60_000)).rejects.toThrow(refusal);
      await expect(space.get(bad)).rejects.toThrow(refusal);
      await expect(space.getMany!([key("fine"), bad])).rejects.toThrow(refusal);
      await expect(
        space.setMany!([
          { key: key("fine"), value: 1 },
          { key: bad, value: 2 },
        ]),
      ).rejects.toThrow(refusal);
      await expect(space.delete(bad)).rejects.toThrow(refusal);
    }
    expect(await space.get(key("fine"))).toBeUndefined();
    // Whole surrogate pairs and the other control characters are stored alike everywhere, apart.
    const kept = ["pair\uD83D\uDE00", "pair\uD83D\uDE01", "tab\tx", "line\nx", "ctl\u0001x", "del\u007Fx"];
    for (const name of kept) await space.set(key(name), name);
    expect(await space.getMany!(kept.map(key))).toEqual(kept);
    expect(await space.setIfAbsent(key("pair\uD83D\uDE02"), "third")).toBe(true);
  });

  it("rejects, never throws, a value JSON cannot hold, and writes nothing of it", async () => {
    const space = store.space("sessions");
    const unserialisable = { count: 1n };
    const calls = [
      () => space.set(key("big"), unserialisable),
      () => space.setMany!([{ key: key("big"), value: unserialisable }]),
      () => space.setIfAbsent(key("big"), unserialisable),
    ];
    for (const call of calls) {
      let pending: Promise<unknown> | undefined;
      expect(() => {
        pending = call();
      }).not.toThrow();
      await expect(pending).rejects.toThrow(/BigInt/);
    }
    expect(await space.get(key("big"))).toBeUndefined();
  });

  it("answers ping with a round trip while open", async () => {
    expect(await store.ping()).toEqual({ ok: true });
  });

  it("keeps data across close and reopen (memory starts empty); a closed store refuses work", async () => {
    run += 1;
    await store.space("sessions").set(key("durable"), { turn: 7 });
    await store.space("dedupe").setIfAbsent(key("seen"), true, 60_000);
    await store.close();
    expect(await store.ping()).toEqual({ ok: false, detail: expect.stringMatching(/is closed$/) });
    await expect(store.space("sessions").get(key("durable"))).rejects.toThrow(/is closed/);
    store = await backend.open();
    expect(await store.space("sessions").get(key("durable"))).toEqual(
      backend.persistent ? { turn: 7 } : undefined,
    );
    expect(await store.space("dedupe").setIfAbsent(key("seen"), true)).toBe(!backend.persistent);
  });
});

describe.each([sqliteBackend(), redisBackend(), postgresBackend()])(
  "store contract across two stores on one $name (as two processes)",
  (backend) => {
    let first: Store;
    let second: Store;
    beforeAll(async () => {
      await backend.setup();
      first = await backend.open();
      second = await backend.open();
    });
    afterAll(async () => {
      await first?.close();
      await second?.close();
      await backend.teardown();
    });

    it("deleteIf spares a value the other store wrote over the one read, and of 20 callers from both exactly one deletes", async () => {
      const mine = first.space("dedupe");
      const theirs = second.space("dedupe");
      await mine.set("claim", { owner: "a", kept: false }, 60_000);
      const read = await theirs.get("claim");
      await mine.set("claim", { owner: "a", kept: true }, 60_000);
      expect(await theirs.deleteIf("claim", read)).toBe(false);
      expect(await theirs.get("claim")).toEqual({ owner: "a", kept: true });
      const current = await theirs.get("claim");
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, caller) =>
          (caller % 2 === 0 ? mine : theirs).deleteIf("claim", current),
        ),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await mine.get("claim")).toBeUndefined();
    });
  },
);

describe("store contract: redis-server across connections", () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("setIfAbsent stays atomic between two stores on separate connections (SET NX)", async () => {
    const first = await createStore({ url: server.url, dataDir: os.tmpdir() });
    const second = await createStore({ url: server.url, dataDir: os.tmpdir() });
    try {
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, caller) =>
          (caller % 2 === 0 ? first : second).space("dedupe").setIfAbsent("event-1", { caller }),
        ),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await second.space("dedupe").get("event-1")).toEqual(await first.space("dedupe").get("event-1"));
      expect(first.description).toBe(`redis://127.0.0.1:${server.port}`);
    } finally {
      await first.close();
      await second.close();
    }
  });

  it("replaceIf stays atomic between two stores on separate connections (one script)", async () => {
    const first = await createStore({ url: server.url, dataDir: os.tmpdir() });
    const second = await createStore({ url: server.url, dataDir: os.tmpdir() });
    try {
      await first.space("schedules").set("task:shared", { runs: 0 });
      const read = await second.space("schedules").get("task:shared");
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, caller) =>
          (caller % 2 === 0 ? first : second).space("schedules").replaceIf("task:shared", read, { caller }),
        ),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      await first.space("schedules").delete("task:shared");
      expect(await second.space("schedules").replaceIf("task:shared", read, { caller: 99 })).toBe(false);
      expect(await second.space("schedules").get("task:shared")).toBeUndefined();
    } finally {
      await first.close();
      await second.close();
    }
  });

  it("replaceIf gives the key the Redis expiry of the value it writes, or none", async () => {
    const store = await createStore({ url: server.url, dataDir: os.tmpdir() });
    const raw = createClient({ url: server.url });
    await raw.connect();
    try {
      const space = store.space("schedules");
      await space.set("task:expiring", "first", 60_000);
      expect(await space.replaceIf("task:expiring", "first", "second", 3_600_000)).toBe(true);
      const left = await raw.pTTL("schedules::task:expiring");
      expect(left).toBeGreaterThan(60_000);
      expect(left).toBeLessThanOrEqual(3_600_000);
      expect(await space.replaceIf("task:expiring", "second", "kept")).toBe(true);
      expect(await raw.pTTL("schedules::task:expiring")).toBe(-1);
    } finally {
      await raw.close();
      await store.close();
    }
  });

  it("fails to open with a clear, credential-free error when nothing listens", async () => {
    await server.stop();
    await expect(
      createStore({ url: `redis://user:s3cret@127.0.0.1:${server.port}/0`, dataDir: os.tmpdir() }),
    ).rejects.toThrow(
      new RegExp(`^cannot connect to the Redis store at redis://127\\.0\\.0\\.1:${server.port}/0: `),
    );
    await expect(
      createStore({ url: `redis://user:s3cret@127.0.0.1:${server.port}/0`, dataDir: os.tmpdir() }),
    ).rejects.not.toThrow(/s3cret/);
  });
});

describe("store contract: postgresql across connections", () => {
  let server: PostgresServer;
  beforeAll(async () => {
    server = await startPostgresServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("setIfAbsent is one conditional upsert: atomic across the pool's connections, an expired row counts as absent", async () => {
    // The adapter's pool spreads concurrent calls over up to 10 server connections, so the 20
    // callers race in separate Postgres sessions, as several processes would.
    const store = await createStore({ url: server.url, dataDir: os.tmpdir() });
    try {
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, caller) => store.space("dedupe").setIfAbsent("event-1", { caller })),
      );
      const winners = results.flatMap((won, caller) => (won ? [caller] : []));
      expect(winners).toHaveLength(1);
      expect(await store.space("dedupe").get("event-1")).toEqual({ caller: winners[0] });
      // A TTL no pause outlasts, so the second call finds the first row; it expires by this
      // process's clock, which the upsert compares the row's expiry with, moved past it.
      expect(await store.space("dedupe").setIfAbsent("lease", "a", 60_000)).toBe(true);
      expect(await store.space("dedupe").setIfAbsent("lease", "b", 60_000)).toBe(false);
      vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 120_000 });
      try {
        expect(await store.space("dedupe").setIfAbsent("lease", "b", 60_000)).toBe(true);
        expect(await store.space("dedupe").setIfAbsent("lease", "c", 60_000)).toBe(false);
      } finally {
        vi.useRealTimers();
      }
      expect(await store.space("dedupe").get("lease")).toBe("b");
      expect(store.description).toBe(`postgres://127.0.0.1:${server.port}/postgres`);
    } finally {
      await store.close();
    }
  });

  it("getMany rejects when the read fails, instead of answering that the keys are absent", async () => {
    const store = await createStore({ url: server.url, dataDir: os.tmpdir() });
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      await store.space("dedupe").set("seen-1", "at");
      expect(await store.space("dedupe").getMany!(["seen-1", "never"])).toEqual(["at", undefined]);
      await client.query("ALTER TABLE keyv RENAME TO keyv_away");
      try {
        await expect(store.space("dedupe").getMany!(["seen-1"])).rejects.toThrow(/keyv/);
      } finally {
        await client.query("ALTER TABLE keyv_away RENAME TO keyv");
      }
    } finally {
      await client.end();
      await store.close();
    }
  });

  it("a row that is not JSON (another app's, hand-edited) fails only its own key: the store opens and purges the rest", async () => {
    const store = await createStore({ url: server.url, dataDir: os.tmpdir() });
    await store.space("dedupe").set("ends-soon", "gone", 60_000);
    await store.close();
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      await client.query("INSERT INTO keyv (key, value) VALUES ('dedupe:mangled', 'not json {')");
      vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 120_000 });
      const reopened = await createStore({ url: server.url, dataDir: os.tmpdir() });
      try {
        const notJson =
          /^stored entry mangled in dedupe is not JSON: it was not written by Coworker, or it is corrupt$/;
        await expect(reopened.space("dedupe").get("mangled")).rejects.toThrow(notJson);
        await expect(reopened.space("dedupe").get("mangled")).rejects.toMatchObject({
          name: "StoredDataError",
        });
        await expect(reopened.space("dedupe").getMany!(["ends-soon", "mangled"])).rejects.toThrow(notJson);
        // Row by row, the key alone fails (the other expired by this clock).
        const [endsSoon, mangled] = await reopened.space("dedupe").getRows!(["ends-soon", "mangled"]);
        expect(endsSoon).toBeUndefined();
        expect(mangled).toMatchObject({ unreadable: { key: "mangled", row: { text: "not json {" } } });
        expect(await reopened.space("dedupe").setIfAbsent("mangled", "fresh")).toBe(false);
      } finally {
        await reopened.close();
      }
      const left = await client.query(
        "SELECT key FROM keyv WHERE key IN ('dedupe:ends-soon', 'dedupe:mangled')",
      );
      expect(left.rows).toEqual([{ key: "dedupe:mangled" }]);
    } finally {
      vi.useRealTimers();
      await client.end();
    }
  });

  it("reports, not crashes, when the server goes away under an open store; then fails to open with a clear, credential-free error", async () => {
    const errors: unknown[] = [];
    const store = await createStore({
      url: server.url,
      dataDir: os.tmpdir(),
      onError: (e) => errors.push(e),
    });
    await Promise.all([1, 2, 3].map((n) => store.space("sessions").set(`idle-${n}`, n)));
    await server.stop(); // the pool's idle connections get "terminating connection due to administrator command"
    expect(await store.ping()).toEqual({ ok: false, detail: expect.any(String) });
    await store.close().catch(() => undefined);
    const url = `postgres://bot:s3cret@127.0.0.1:${server.port}/coworker`;
    const opening = createStore({ url, dataDir: os.tmpdir() });
    await expect(opening).rejects.toThrow(
      new RegExp(`^cannot reach the Postgres store at postgres://127\\.0\\.0\\.1:${server.port}/coworker: `),
    );
    await expect(createStore({ url, dataDir: os.tmpdir() })).rejects.not.toThrow(/s3cret/);
  });
});

describe("getAll", () => {
  it("uses getMany when the space has it, else one get per key", async () => {
    const calls: string[] = [];
    const plain: KeyValueSpace = {
      get: async <T>(key: string) => {
        calls.push(`get ${key}`);
        return (key === "a" ? 1 : undefined) as T | undefined;
      },
      set: async () => undefined,
      delete: async () => false,
      setIfAbsent: async () => true,
      replaceIf: async () => false,
      deleteIf: async () => false,
    };
    expect(await getAll(plain, ["a", "b"])).toEqual([1, undefined]);
    const many = { ...plain, getMany: async <T>(keys: readonly string[]) => keys.map(() => 7 as T) };
    expect(await getAll(many, ["a", "b"])).toEqual([7, 7]);
    expect(calls).toEqual(["get a", "get b"]);
  });
});

describe("setAll", () => {
  it("uses setMany when the space has it, else writes the entries one by one in order", async () => {
    const calls: string[] = [];
    const plain: KeyValueSpace = {
      get: async () => undefined,
      set: async (key) => {
        calls.push(`set ${key}`);
      },
      delete: async () => false,
      setIfAbsent: async () => true,
      replaceIf: async () => false,
      deleteIf: async () => false,
    };
    const entries = [
      { key: "page", value: 1 },
      { key: "head", value: 2 },
    ];
    await setAll(plain, entries);
    await setAll({ ...plain, setMany: async (all) => void calls.push(`setMany ${all.length}`) }, entries);
    expect(calls).toEqual(["set page", "set head", "setMany 2"]);
  });
});
