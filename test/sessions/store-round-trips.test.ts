/**
 * What the session layer asks of the store: the active index is read once and written when a
 * session joins it (with that record) and, lazily, after sessions left it; index writes never
 * overlap and coalesce, and a thread whose session is in memory is found without a
 * read while a new session's history is never read at all.
 */
import pino from "pino";
import { describe, expect, it } from "vitest";
import { HistoryLog } from "../../src/store/history-log.js";
import { InboundDedupe } from "../../src/sessions/inbound-dedupe.js";
import { SessionCache } from "../../src/sessions/session-cache.js";
import type { SessionRecord } from "../../src/sessions/session-record.js";
import { SessionRecords } from "../../src/sessions/session-records.js";
import { WorkspaceDownloads } from "../../src/sessions/workspace-downloads.js";
import { TurnEndSaves } from "../../src/sessions/turn-end-saves.js";
import type { KeyValueSpace, SpaceEntry } from "../../src/store/store.js";
import { eventually } from "../support/eventually.js";
import { openStore, sessionRecord, thread } from "./helpers/harness.js";

/** A space that logs every call reaching it; setMany can be held open to observe overlap. */
function recording(space: KeyValueSpace) {
  const log: string[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let gate: Promise<void> | undefined;
  const wrapped: KeyValueSpace = {
    get: (key) => {
      log.push(`get ${key}`);
      return space.get(key);
    },
    set: (key, value, ttl) => {
      log.push(`set ${key}`);
      return space.set(key, value, ttl);
    },
    delete: (key) => {
      log.push(`delete ${key}`);
      return space.delete(key);
    },
    setIfAbsent: (key, value, ttl) => {
      log.push(`setIfAbsent ${key}`);
      return space.setIfAbsent(key, value, ttl);
    },
    replaceIf: (key, expected, value, ttlMs) => {
      log.push(`replaceIf ${key}`);
      return space.replaceIf(key, expected, value, ttlMs);
    },
    deleteIf: (key, expected) => {
      log.push(`deleteIf ${key}`);
      return space.deleteIf(key, expected);
    },
    setMany: async (entries: readonly SpaceEntry[]) => {
      log.push(`setMany ${entries.map((e) => e.key).join(",")}`);
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        await gate;
        await space.setMany!(entries);
      } finally {
        inFlight -= 1;
      }
    },
  };
  return {
    log,
    space: wrapped,
    get maxInFlight() {
      return maxInFlight;
    },
    hold(): () => void {
      let release!: () => void;
      gate = new Promise((resolve) => {
        release = resolve;
      });
      return release;
    },
  };
}

function record(id: string, queued = false): SessionRecord {
  const base = sessionRecord(id);
  return queued
    ? { ...base, queue: [{ user: { id: "U", name: "U" }, text: "hi", files: [], sentAt: "t" }] }
    : base;
}

describe("session records and the active index", () => {
  it("reads the index once, joins it with the record, and drops a session that left it lazily", async () => {
    const store = await openStore();
    const rec = recording(store.space("sessions"));
    const records = new SessionRecords(rec.space, undefined, 20);
    await records.put(record("a"));
    await records.put(record("a", true));
    await records.put(record("a", true));
    await records.put(record("a"));
    expect(rec.log).toEqual([
      "get active",
      "setMany rec:a",
      // joining: the index first, then the record, in one write
      "setMany active,rec:a",
      "setMany rec:a",
      // leaving: the record alone; the index still lists the session for now (harmless)
      "setMany rec:a",
    ]);
    expect(await store.space("sessions").get("active")).toEqual(["a"]);
    await eventually(
      async () => (await store.space("sessions").get<string[]>("active"))?.length === 0,
      "the drop",
    );
    expect(rec.log.at(-1)).toBe("setMany active");
    expect(await new SessionRecords(store.space("sessions")).activeIds()).toEqual([]);
  });

  it("needs no index write for a session that comes back before its entry was dropped", async () => {
    const store = await openStore();
    const rec = recording(store.space("sessions"));
    const records = new SessionRecords(rec.space, undefined, 60_000);
    await records.put(record("a", true));
    await records.put(record("a"));
    await records.put(record("a", true));
    expect(rec.log).toEqual(["get active", "setMany active,rec:a", "setMany rec:a", "setMany rec:a"]);
    expect(await records.activeIds()).toEqual(["a"]);
    expect(await new SessionRecords(store.space("sessions")).activeIds()).toEqual(["a"]);
  });

  it("drops, at start, index entries whose record has no pending work and keeps unreadable ones", async () => {
    const store = await openStore();
    const space = store.space("sessions");
    const writer = new SessionRecords(space, undefined, 60_000);
    await writer.put(record("idle", true));
    await writer.put(record("busy", true));
    await writer.put(record("idle"));
    await space.set("active", ["idle", "busy", "gone", "broken"]);
    await space.set("rec:broken", { v: 99, kind: "session", data: {} });
    const records = new SessionRecords(space, undefined, 20);
    expect([...(await records.activeIds())].sort()).toEqual(["broken", "busy"]);
    await eventually(async () => (await space.get<string[]>("active"))?.length === 2, "the drop");
    expect([...((await space.get<string[]>("active")) ?? [])].sort()).toEqual(["broken", "busy"]);
  });

  it("leaves out of the next index write a session whose end is not saved yet (left)", async () => {
    const store = await openStore();
    const rec = recording(store.space("sessions"));
    const records = new SessionRecords(rec.space, undefined, 60_000);
    await records.put(record("a", true));
    records.left("a");
    await records.put(record("b", true));
    expect(rec.log.at(-1)).toBe("setMany active,rec:b");
    expect(await store.space("sessions").get("active")).toEqual(["b"]);
    // "a" comes back with new work before its end was saved: it joins again.
    await records.put(record("a", true));
    expect(rec.log.at(-1)).toBe("setMany active,rec:a");
    expect([...((await store.space("sessions").get<string[]>("active")) ?? [])].sort()).toEqual(["a", "b"]);
  });

  it("never has two index writes in flight, and one write carries every change made while it waited", async () => {
    const store = await openStore();
    const rec = recording(store.space("sessions"));
    const records = new SessionRecords(rec.space);
    await records.activeIds();
    const release = rec.hold();
    const first = records.put(record("s0", true));
    await new Promise((resolve) => setImmediate(resolve));
    const rest = Array.from({ length: 9 }, (_, i) => records.put(record(`s${i + 1}`, true)));
    await new Promise((resolve) => setImmediate(resolve));
    release();
    await Promise.all([first, ...rest]);
    expect(rec.maxInFlight).toBe(1);
    expect(rec.log.filter((line) => line.startsWith("setMany"))).toHaveLength(2);
    const reopened = new SessionRecords(store.space("sessions"));
    expect([...(await reopened.activeIds())].sort()).toEqual(
      Array.from({ length: 10 }, (_, i) => `s${i}`).sort(),
    );
    for (let i = 0; i < 10; i += 1) expect((await reopened.get(`s${i}`))?.queue).toHaveLength(1);
  });
});

describe("session cache reads", () => {
  async function cacheOn(capacity: number) {
    const evicted: string[] = [];
    const store = await openStore();
    const sessions = recording(store.space("sessions"));
    const history = recording(store.space("history"));
    let n = 0;
    const records = new SessionRecords(sessions.space);
    const cache = new SessionCache({
      stores: {
        records,
        downloads: new WorkspaceDownloads(records.downloads, "/workspace", pino({ level: "silent" })),
        history: new HistoryLog(history.space),
        journal: store.space("journal"),
        dedupe: new InboundDedupe(store),
        writesInOrder: store.writesInOrder,
        now: () => new Date(0),
        logger: pino({ level: "silent" }),
      },
      capacity,
      defaults: { mode: "interactive", provider: "p", model: "m" },
      newId: () => `id${++n}`,
      prepare: () => undefined,
      endSaves: new TurnEndSaves(pino({ level: "silent" })),
      isPinned: () => false,
      onEvict: (id) => evicted.push(id),
    });
    return { cache, sessions, history, evicted };
  }

  it("finds a thread's session in memory without reading, and a new session's history is never read", async () => {
    const { cache, sessions, history } = await cacheOn(10);
    const created = await cache.forTarget(thread("1.1"));
    await created.persistence.append([{ role: "user", content: "hello" }]);
    expect(history.log.filter((line) => line.startsWith("get"))).toEqual([]);
    sessions.log.length = 0;
    expect(await cache.forTarget(thread("1.1"))).toBe(created);
    expect(await cache.existingFor(thread("1.1"))).toBe(created);
    expect(cache.inMemoryFor(thread("1.1"))).toBe(created);
    expect(cache.inMemoryFor(thread("2.2"))).toBeUndefined();
    expect(sessions.log).toEqual([]);
    const renewed = await cache.renew(thread("1.1"), created);
    sessions.log.length = 0;
    expect(await cache.forTarget(thread("1.1"))).toBe(renewed);
    expect(cache.inMemoryFor(thread("1.1"))).toBe(renewed);
    expect(sessions.log).toEqual([]);
  });

  it("answers at once only for a session in memory: none once it was evicted", async () => {
    const { cache, evicted } = await cacheOn(1);
    const first = await cache.forTarget(thread("1.1"));
    await cache.forTarget(thread("2.2"));
    await cache.settled();
    expect(evicted).toEqual([first.id]);
    expect(cache.inMemoryFor(thread("1.1"))).toBeUndefined();
  });

  it("reads again once the session was evicted, and reloads it with its history", async () => {
    const { cache, sessions, evicted } = await cacheOn(1);
    const first = await cache.forTarget(thread("1.1"));
    await first.update((record) => ({ ...record, title: "kept" }));
    await first.persistence.append([{ role: "user", content: "remember me" }]);
    await cache.forTarget(thread("2.2"));
    await cache.settled();
    expect(evicted).toEqual([first.id]);
    sessions.log.length = 0;
    const again = await cache.forTarget(thread("1.1"));
    expect(again).not.toBe(first);
    expect(again.id).toBe(first.id);
    expect(again.history).toEqual([{ role: "user", content: "remember me" }]);
    // The workspace's downloaded files were read with the first session; the session's own log
    // (kept before the record moved to the workspace) costs one round trip (one getMany where the
    // store has it): its fold mark (none), its head (no snapshot) and its first page (none).
    expect(sessions.log).toEqual([
      "get key:slack:T1:C1:1.1",
      `get rec:${first.id}`,
      `get dlfolded:${first.id}`,
      `get dlhead:${first.id}`,
      `get dl:${first.id}:0`,
    ]);
  });

  it("writes a new session first with its first change, the thread entry in the same write", async () => {
    const { cache, sessions } = await cacheOn(10);
    const created = await cache.forTarget(thread("1.1"));
    // The process's first session reads the workspace's downloaded files (one round trip), once.
    expect(sessions.log).toEqual([
      "get key:slack:T1:C1:1.1",
      "get dlhead:ws:/workspace",
      "get dl:ws:/workspace:0",
    ]);
    sessions.log.length = 0;
    await cache.forTarget(thread("2.2"));
    expect(sessions.log).toEqual(["get key:slack:T1:C1:2.2"]);
    const records = new SessionRecords(sessions.space);
    expect(await records.currentId("slack:T1:C1:1.1")).toBeUndefined();
    sessions.log.length = 0;
    await created.update((record) => ({ ...record, title: "first" }));
    expect(sessions.log).toEqual(["get active", `setMany rec:${created.id},key:slack:T1:C1:1.1`]);
    expect(await records.currentId("slack:T1:C1:1.1")).toBe(created.id);
    expect((await records.get(created.id))?.title).toBe("first");
    await created.update((record) => ({ ...record, title: "second" }));
    expect(sessions.log.at(-1)).toBe(`setMany rec:${created.id}`);
  });

  it("makes one session for concurrent first messages of a new thread", async () => {
    const { cache } = await cacheOn(10);
    const [a, b, c] = await Promise.all([1, 2, 3].map(() => cache.forTarget(thread("1.1"))));
    expect(b).toBe(a);
    expect(c).toBe(a);
  });

  it("leaves nothing behind of a new session nothing was saved for once it leaves memory", async () => {
    const { cache, sessions, evicted } = await cacheOn(1);
    const unused = await cache.forTarget(thread("1.1"));
    await cache.forTarget(thread("2.2"));
    await cache.settled();
    expect(evicted).toEqual([unused.id]);
    expect(sessions.log.filter((line) => !line.startsWith("get"))).toEqual([]);
    const next = await cache.forTarget(thread("1.1"));
    expect(next.id).not.toBe(unused.id);
  });

  it("keeps a renewed thread on its new session when the unsaved old one is saved later", async () => {
    const { cache, sessions } = await cacheOn(10);
    const old = await cache.forTarget(thread("1.1"));
    const renewed = await cache.renew(thread("1.1"), old);
    await old.update((record) => ({ ...record, title: "late" }));
    expect(await new SessionRecords(sessions.space).currentId("slack:T1:C1:1.1")).toBe(renewed.id);
    expect(await cache.forTarget(thread("1.1"))).toBe(renewed);
  });
});
