/** HistoryLog: paged append-only session history — shape on disk, appends without reads, ordering, failures (a pruned mark other processes keep changing too). */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ConversationMessage } from "../../src/core/messages.js";
import { createStore } from "../../src/store/create-store.js";
import { HistoryLog } from "../../src/store/history-log.js";
import { historyHeadKey, historyPageKey, historyPrunedKey } from "../../src/store/history-records.js";
import type { KeyValueSpace, SpaceEntry, Store } from "../../src/store/store.js";
import { RowText } from "../../src/store/stored-row.js";
import { spaceLike } from "../support/space-like.js";
import { StoredDataError } from "../../src/store/versioned.js";

const user = (n: number): ConversationMessage => ({ role: "user", content: `message ${n}` });
const users = (from: number, count: number) => Array.from({ length: count }, (_, i) => user(from + i));
/** The bytes of `value`'s JSON, as a page's are counted. */
const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/** Wraps a space and counts the operations that reach it (with `setMany` only when asked). */
function counting(space: KeyValueSpace, options: { setMany?: boolean } = {}) {
  const counts = { get: 0, set: 0, delete: 0, setMany: 0 };
  const writes: string[][] = [];
  const wrapped = spaceLike(space, {
    get: (key) => {
      counts.get += 1;
      return space.get(key);
    },
    set: (key, value, ttl) => {
      counts.set += 1;
      return space.set(key, value, ttl);
    },
    delete: (key) => {
      counts.delete += 1;
      return space.delete(key);
    },
    ...(options.setMany
      ? {
          setMany: (entries: readonly SpaceEntry[]) => {
            counts.setMany += 1;
            writes.push(entries.map((entry) => entry.key));
            return space.setMany!(entries);
          },
        }
      : {}),
  });
  return { counts, writes, space: wrapped };
}

describe("HistoryLog", () => {
  let store: Store;
  let space: KeyValueSpace;
  beforeEach(async () => {
    store = await createStore({ url: "memory:", dataDir: os.tmpdir() });
    space = store.space("history");
  });
  afterEach(async () => {
    await store.close();
  });

  it("stores a small head and fixed-size pages, and loads messages in order", async () => {
    const log = new HistoryLog(space, { pageSize: 3 });
    const writer = log.openNew("s");
    for (const message of users(0, 7)) await writer.append(message);
    const { messages, count } = await log.open("s");
    expect(messages).toEqual(users(0, 7));
    expect(count).toBe(7);
    expect(await space.get(historyHeadKey("s"))).toEqual({
      v: 1,
      kind: "history-head",
      data: { count: 7, pageSize: 3, pages: 3 },
    });
    expect(await space.get(historyPageKey("s", 1))).toEqual({
      v: 1,
      kind: "history-page",
      data: { messages: users(3, 3), bytes: jsonBytes(users(3, 3)) },
    });
    expect(await space.get(historyPageKey("s", 2))).toEqual({
      v: 1,
      kind: "history-page",
      data: { messages: [user(6)], bytes: jsonBytes([user(6)]) },
    });
  });

  it("writes each page's row as the JSON of its record, byte for byte, across appends and reopens", async () => {
    const log = new HistoryLog(space, { pageSize: 4 });
    const meta = { at: "2026-12-07T10:00:00.000Z", by: "7" };
    const writer = log.openNew("s");
    await writer.append({ role: "user", content: 'say "é"\n', meta });
    await writer.append({ role: "assistant", content: null, tool_calls: [] }, user(2));
    await (await log.open("s")).append(user(3), user(4));
    const rows = await space.getRows!([historyPageKey("s", 0), historyPageKey("s", 1)]);
    const pages = [
      [
        { role: "user", content: 'say "é"\n', meta },
        { role: "assistant", content: null, tool_calls: [] },
        user(2),
        user(3),
      ],
      [user(4)],
    ];
    pages.forEach((messages, index) => {
      const record = { v: 1, kind: "history-page", data: { messages, bytes: jsonBytes(messages) } };
      expect(rows[index]?.expected).toEqual(new RowText(JSON.stringify({ value: record }), undefined));
    });
  });

  it("stores each page with the bytes of its messages' JSON, right across appends that fill, cross and start pages", async () => {
    const log = new HistoryLog(space, { pageSize: 4 });
    const wide = (n: number): ConversationMessage => ({
      role: "assistant",
      content: `é ${"日本".repeat(n)} 🙂`,
    });
    const writer = log.openNew("s");
    await writer.append(wide(1));
    await writer.append(wide(2), wide(3), wide(4));
    await writer.append(wide(5), wide(6), wide(7), wide(8), wide(9), wide(10));
    await (await log.open("s")).append(wide(11));
    await (await log.open("s")).append(wide(12), wide(13));
    const stored = async (index: number) =>
      ((await space.get(historyPageKey("s", index))) as { data: { messages: unknown[]; bytes: number } })
        .data;
    for (const index of [0, 1, 2, 3]) {
      const { messages, bytes } = await stored(index);
      expect({ index, bytes }).toEqual({ index, bytes: jsonBytes(messages) });
    }
    // A page holding more than the head counts (a crash before the head's write): its stored
    // bytes count them too, so the open measures the page it keeps, and the next append goes on from that.
    const { messages } = await stored(3);
    await space.set(historyPageKey("s", 3), {
      v: 1,
      kind: "history-page",
      data: { messages: [...messages, wide(99)], bytes: jsonBytes([...messages, wide(99)]) },
    });
    await (await log.open("s")).append(wide(14));
    expect(await stored(3)).toEqual({
      messages: [...messages, wide(14)],
      bytes: jsonBytes([...messages, wide(14)]),
    });
  });

  it("counts each page at the bytes stored with it, and measures a page an older build wrote without them", async () => {
    const seed = new HistoryLog(space, { pageSize: 10 }).openNew("s");
    await seed.append(
      ...Array.from({ length: 95 }, (_, i) => ({ role: "user" as const, content: `${i}:`.padEnd(80, "x") })),
    );
    const page = async (index: number) =>
      ((await space.get(historyPageKey("s", index))) as { data: { messages: unknown[]; bytes: number } })
        .data;
    const log = new HistoryLog(space, { window: { messages: 1_000, bytes: 3.2 * (await page(8)).bytes } });
    expect((await log.open("s")).start).toBe(70);
    // Page 8 says it is larger than the whole budget: the window is the newest page alone.
    await space.set(historyPageKey("s", 8), {
      v: 1,
      kind: "history-page",
      data: { ...(await page(8)), bytes: 1e9 },
    });
    expect((await log.open("s")).start).toBe(90);
    // Pages as an older build wrote them, without their bytes: measured, the same window as before.
    for (let index = 0; index < 10; index += 1) {
      const { messages } = await page(index);
      await space.set(historyPageKey("s", index), { v: 1, kind: "history-page", data: { messages } });
    }
    const history = await log.open("s");
    expect(history.start).toBe(70);
    const { messages } = await page(9);
    await history.append(user(95));
    expect(await page(9)).toEqual({
      messages: [...messages, user(95)],
      bytes: jsonBytes([...messages, user(95)]),
    });
  });

  it("an append fills the open page then starts new ones; an empty one writes nothing", async () => {
    const log = new HistoryLog(space, { pageSize: 4 });
    const writer = log.openNew("s");
    await writer.append();
    expect(await space.get(historyHeadKey("s"))).toBeUndefined();
    await writer.append(...users(0, 2));
    await (await log.open("s")).append(...users(2, 9));
    expect((await log.open("s")).messages).toEqual(users(0, 11));
    expect(await space.get(historyHeadKey("s"))).toMatchObject({ data: { count: 11, pages: 3 } });
    const unknown = await log.open("unknown");
    expect({ messages: unknown.messages, count: unknown.count }).toEqual({ messages: [], count: 0 });
  });

  it("keeps each session's original page size when the option changes later", async () => {
    await new HistoryLog(space, { pageSize: 2 }).openNew("s").append(...users(0, 3));
    const wider = new HistoryLog(space, { pageSize: 50 });
    await (await wider.open("s")).append(...users(3, 4));
    expect((await wider.open("s")).messages).toEqual(users(0, 7));
    expect(await space.get(historyHeadKey("s"))).toMatchObject({ data: { count: 7, pageSize: 2, pages: 4 } });
  });

  it("checks the marks the reviewer reads: who wrote a message, and the agent's own note", async () => {
    const log = new HistoryLog(space);
    const marked: ConversationMessage = { role: "user", content: "hi", meta: { by: "U1", agentNote: false } };
    const writer = log.openNew("s");
    await writer.append(marked);
    expect((await log.open("s")).messages).toEqual([marked]);
    for (const meta of [{ by: 7 }, { agentNote: "true" }]) {
      const bad = { role: "user", content: "x", meta } as unknown as ConversationMessage;
      await expect(writer.append(bad)).rejects.toThrow(/^history of session "s": message 0 is invalid/);
    }
  });

  it("names the session and page when a page is corrupt, truncated, or the newest is missing", async () => {
    const log = new HistoryLog(space, { pageSize: 2 });
    await log.openNew("s").append(...users(0, 3));
    const page1 = await space.get(historyPageKey("s", 1));
    await space.set(historyPageKey("s", 1), {
      v: 1,
      kind: "history-page",
      data: { messages: [{ role: "robot" }] },
    });
    await expect(log.open("s")).rejects.toThrow(StoredDataError);
    await expect(log.open("s")).rejects.toThrow(
      /^stored history-page \(session "s", page 1\) is corrupt: messages\.0/,
    );
    await space.delete(historyPageKey("s", 1));
    await expect(log.open("s")).rejects.toThrow('stored history-page (session "s", page 1) is missing');
    await space.set(historyPageKey("s", 1), page1);
    await space.set(historyPageKey("s", 0), { v: 1, kind: "history-page", data: { messages: [user(0)] } });
    await expect(log.open("s")).rejects.toThrow(
      'stored history-page (session "s", page 0) is truncated: 1 of 2 messages',
    );
  });

  it("refuses a head written by a newer build", async () => {
    await space.set(historyHeadKey("s"), {
      v: 2,
      kind: "history-head",
      data: { count: 0, pageSize: 1, pages: 0 },
    });
    await expect(new HistoryLog(space).open("s")).rejects.toThrow(
      'stored history-head (session "s") was written by a newer Coworker (schema v2); this build reads v1',
    );
  });

  it("rejects bad session ids and page sizes", async () => {
    const log = new HistoryLog(space);
    expect(() => log.openNew("")).toThrow("history session id must be a string of 1–180 characters");
    await expect(log.open("x".repeat(181))).rejects.toThrow(/1–180 characters/);
    expect(() => new HistoryLog(space, { pageSize: 0 })).toThrow(
      "HistoryLog pageSize must be a positive whole number",
    );
  });
});

describe("SessionHistory (a history held open by its only writer)", () => {
  let store: Store;
  let space: KeyValueSpace;
  beforeEach(async () => {
    store = await createStore({ url: "memory:", dataDir: os.tmpdir() });
    space = store.space("history");
  });
  afterEach(async () => {
    await store.close();
  });

  it("opens the stored history deep-frozen, and appends with one setMany (pages, then the head) and no reads", async () => {
    await new HistoryLog(space, { pageSize: 3 }).openNew("s").append(...users(0, 4));
    const { counts, writes, space: counted } = counting(space, { setMany: true });
    const log = new HistoryLog(counted, { pageSize: 3 });
    const history = await log.open("s");
    expect(history.messages).toEqual(users(0, 4));
    expect(Object.isFrozen(history.messages)).toBe(true);
    expect(Object.isFrozen(history.messages[0])).toBe(true);
    const readsToOpen = counts.get;
    await history.append(user(4));
    await history.append(user(5), user(6));
    expect(counts).toEqual({ get: readsToOpen, set: 0, delete: 0, setMany: 2 });
    expect(writes).toEqual([
      [historyPageKey("s", 1), historyHeadKey("s")],
      [historyPageKey("s", 1), historyPageKey("s", 2), historyHeadKey("s")],
    ]);
    expect(history.messages).toEqual(users(0, 7));
    expect((await new HistoryLog(space).open("s")).messages).toEqual(users(0, 7));
  });

  it("starts a new session's history without reading, and keeps one frozen list until the next append", async () => {
    const { counts, space: counted } = counting(space, { setMany: true });
    const history = new HistoryLog(counted, { pageSize: 2 }).openNew("fresh");
    expect(history.messages).toEqual([]);
    const message = user(0);
    await history.append(message);
    const list = history.messages;
    expect(list).toBe(history.messages);
    expect(list[0]).toBe(message);
    expect(Object.isFrozen(message)).toBe(true);
    await history.append(user(1));
    expect(history.messages).not.toBe(list);
    expect(list).toEqual([user(0)]);
    expect(counts.get).toBe(0);
    expect((await new HistoryLog(space).open("fresh")).messages).toEqual(users(0, 2));
  });

  it("applies concurrent appends in call order; a failed write changes nothing and the next append still lands", async () => {
    let failNext = false;
    const flaky = spaceLike(space, {
      setMany: async (entries) => {
        if (failNext) {
          failNext = false;
          throw new Error("disk full");
        }
        await space.setMany!(entries);
      },
    });
    const log = new HistoryLog(flaky, { pageSize: 2 });
    const history = log.openNew("s");
    await Promise.all(users(0, 5).map((message) => history.append(message)));
    expect(history.messages).toEqual(users(0, 5));
    failNext = true;
    await expect(history.append(user(5))).rejects.toThrow("disk full");
    expect(history.messages).toEqual(users(0, 5));
    await history.append(user(6));
    expect(history.messages).toEqual([...users(0, 5), user(6)]);
    expect((await log.open("s")).messages).toEqual([...users(0, 5), user(6)]);
  });

  it("reads its first page alone (no head or mark again), and none once that page is pruned (here or by another open) or the history is empty", async () => {
    await new HistoryLog(space, { pageSize: 3 }).openNew("s").append(...users(0, 10));
    const { counts, space: counted } = counting(space);
    const window = { messages: 4, bytes: 1_000_000 };
    const other = await new HistoryLog(space, { window }).open("s");
    const history = await new HistoryLog(counted, { window }).open("s");
    expect(history.start).toBe(6);
    const readsToOpen = counts.get;
    expect(await history.firstPage()).toEqual(users(0, 3));
    expect(counts.get).toBe(readsToOpen + 1);
    expect(await history.prune()).toBe(2);
    expect(await history.firstPage()).toEqual([]);
    expect(await other.firstPage()).toEqual([]);
    expect(await new HistoryLog(counted).openNew("empty").firstPage()).toEqual([]);
    expect(counts.get).toBe(readsToOpen + 1);
  });

  it("gives up raising the pruned mark with a clear error after 16 writes lost to other processes, the mark left as they wrote it", async () => {
    await new HistoryLog(space).openNew("s").append(...users(0, 100));
    const theirs = { v: 1, kind: "history-pruned", data: { pages: 1 } };
    await space.set(historyPrunedKey("s"), theirs);
    let lost = 0;
    const contested: KeyValueSpace = {
      ...counting(space).space,
      // Another process changes the mark before each write: this one's compare-and-set never wins.
      replaceIf: async () => {
        lost += 1;
        if (lost > 100) throw new Error("still trying after 100 lost writes");
        return false;
      },
    };
    const history = await new HistoryLog(contested, { window: { messages: 20, bytes: 1_000_000 } }).open("s");
    await expect(history.prune()).rejects.toThrow(
      "the pruned mark of session s's history was changed by other processes 16 times while this one raised it to 8 pages; left as they wrote it",
    );
    expect(lost).toBe(16);
    expect(await space.get(historyPrunedKey("s"))).toEqual(theirs);
  });

  it("rejects an invalid message without writing anything", async () => {
    const { counts, space: counted } = counting(space, { setMany: true });
    const history = new HistoryLog(counted).openNew("s");
    const bad = { role: "robot", content: "?" } as unknown as ConversationMessage;
    await expect(history.append(user(0), bad)).rejects.toThrow(
      /^history of session "s": message 1 is invalid/,
    );
    expect(counts.setMany).toBe(0);
    expect(history.messages).toEqual([]);
  });
});

describe("HistoryLog on the SQLite file", () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), "coworker-history-"));
  });
  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it("survives closing and reopening the store", async () => {
    const first = await createStore({ dataDir });
    await new HistoryLog(first.space("history"), { pageSize: 3 })
      .openNew("slack:T1:C1:1.2")
      .append(...users(0, 8));
    await first.close();
    const second = await createStore({ dataDir });
    const log = new HistoryLog(second.space("history"));
    await (await log.open("slack:T1:C1:1.2")).append(user(8));
    expect((await log.open("slack:T1:C1:1.2")).messages).toEqual(users(0, 9));
    await second.close();
  });
});
