/**
 * History window (store/history-window.ts, HistoryLog.open / SessionHistory.prune) on every
 * backend — memory, the SQLite file, a real redis-server and a real PostgreSQL on loopback:
 * opening a long history reads a bounded number of pages and bytes (from the compaction anchor's
 * page when given), the pages before the window are pruned and the mark keeps every open above
 * them, and a process appending while another prunes loses nothing.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ConversationMessage } from "../../src/core/messages.js";
import { HistoryLog } from "../../src/store/history-log.js";
import { historyPageKey, historyPrunedKey } from "../../src/store/history-records.js";
import { HISTORY_WINDOW } from "../../src/store/history-window.js";
import type { KeyValueSpace } from "../../src/store/store.js";
import { spaceLike } from "../support/space-like.js";
import { type PostgresServer, startPostgresServer } from "../support/postgres-server.js";
import { type RedisServer, startRedisServer } from "../support/redis-server.js";
import { tempStores } from "../support/temp-stores.js";

const open = tempStores("history-window-");

/** A message of about `bytes` bytes of JSON. */
const message = (n: number, bytes: number): ConversationMessage => ({
  role: n % 2 === 0 ? "user" : "assistant",
  content: `${n}:`.padEnd(bytes - 40, "x"),
});
const messages = (from: number, count: number, bytes: number) =>
  Array.from({ length: count }, (_, i) => message(from + i, bytes));

/** `space` counting the values read from it and their JSON bytes (through get and getMany alike). */
function metered(space: KeyValueSpace) {
  const read = { values: 0, bytes: 0 };
  const count = (value: unknown) => {
    if (value === undefined) return;
    read.values += 1;
    read.bytes += Buffer.byteLength(JSON.stringify(value));
  };
  const wrapped = spaceLike(space, {
    get: async (key) => {
      const value = await space.get(key);
      count(value);
      return value as never;
    },
    getMany: async (keys) => {
      const values = space.getMany
        ? await space.getMany(keys)
        : await Promise.all(keys.map((k) => space.get(k)));
      for (const value of values) count(value);
      return values as never;
    },
    ...(space.setMany ? { setMany: (entries) => space.setMany!(entries) } : {}),
  });
  return { read, space: wrapped };
}

/** Write `count` messages of `bytes` each to a new session, in batches. */
async function longHistory(log: HistoryLog, sessionId: string, count: number, bytes: number): Promise<void> {
  const writer = log.openNew(sessionId);
  for (let from = 0; from < count; from += 500) {
    await writer.append(...messages(from, Math.min(500, count - from), bytes));
  }
}

let redis: RedisServer | undefined;
let postgres: PostgresServer | undefined;
beforeAll(async () => {
  [redis, postgres] = await Promise.all([startRedisServer(), startPostgresServer()]);
}, 60_000);
afterAll(async () => {
  await Promise.all([redis?.stop(), postgres?.stop()]);
});

const BACKENDS: ReadonlyArray<{ name: string; url: () => string | undefined }> = [
  { name: "memory", url: () => "memory:" },
  { name: "sqlite file", url: () => undefined },
  { name: "redis-server", url: () => redis?.url },
  { name: "postgresql", url: () => postgres?.url },
];

/** A small budget, so each backend's test writes little: 200 messages, 40 kB. */
const WINDOW = { messages: 200, bytes: 40_000 };

describe.each(BACKENDS)("history window: $name", ({ name, url }) => {
  /** Two stores on one backend, as two processes would have (memory: one store, shared). */
  async function twoProcesses() {
    const first = await open(url());
    const second = name === "memory" ? first : await open(url());
    return [first.space("history"), second.space("history")] as const;
  }

  it("opens a long history reading its newest pages only, within the byte budget", async () => {
    const [space] = await twoProcesses();
    const id = `s-${randomUUID()}`;
    await longHistory(new HistoryLog(space), id, 1_000, 1_000);
    const { read, space: counted } = metered(space);
    const budget = { messages: 600, bytes: 300_000 };
    const history = await new HistoryLog(counted, { window: budget }).open(id);
    // 1,000 messages of 1 kB in pages of 10: the old open read all 100 pages (1 MB).
    expect(read.bytes).toBeLessThan(budget.bytes + 11_000);
    expect(read.values).toBeLessThan(35);
    expect(history.count).toBe(1_000);
    expect(history.start % 10).toBe(0);
    expect(history.start).toBeGreaterThan(650);
    expect(history.messages).toEqual(messages(history.start, 1_000 - history.start, 1_000));
  });

  it("reads from the compaction anchor's page when it is newer than the budget's", async () => {
    const [space] = await twoProcesses();
    const id = `s-${randomUUID()}`;
    await longHistory(new HistoryLog(space), id, 1_000, 100);
    const log = new HistoryLog(space, { window: WINDOW });
    // The message budget alone: the page of message 800 on.
    expect((await log.open(id)).start).toBe(800);
    const { read, space: counted } = metered(space);
    const history = await new HistoryLog(counted, { window: WINDOW }).open(id, {
      from: Promise.resolve(957),
    });
    expect(history.start).toBe(950);
    expect(history.messages).toEqual(messages(950, 50, 100));
    expect(read.values).toBe(1 + 5);
    // An anchor older than the budget reads no further back than the budget.
    expect((await log.open(id, { from: 12 })).start).toBe(800);
  });

  it("prunes the pages before the budget (not the anchor's), and every later open stays above the mark", async () => {
    const [space] = await twoProcesses();
    const id = `s-${randomUUID()}`;
    await longHistory(new HistoryLog(space), id, 1_000, 100);
    const history = await new HistoryLog(space, { window: WINDOW }).open(id, { from: 957 });
    expect(await history.prune()).toBe(80);
    expect(await history.prune()).toBe(0);
    expect(await space.get(historyPageKey(id, 79))).toBeUndefined();
    expect(await space.get(historyPageKey(id, 80))).toBeDefined();
    expect(await space.get(historyPrunedKey(id))).toEqual({
      v: 1,
      kind: "history-pruned",
      data: { pages: 80 },
    });
    // The anchor is unreadable now: the budget's window is still whole.
    const again = await new HistoryLog(space, { window: WINDOW }).open(id);
    expect(again.messages).toEqual(messages(800, 200, 100));
    // A process with a larger budget reads from the mark, not into the pruned pages.
    const wider = await new HistoryLog(space, { window: HISTORY_WINDOW }).open(id);
    expect(wider.start).toBe(800);
    expect(wider.messages).toEqual(messages(800, 200, 100));
    // Appends go on; the next open prunes what the budget has passed by.
    await again.append(...messages(1_000, 25, 100));
    const later = await new HistoryLog(space, { window: WINDOW }).open(id);
    expect(later.start).toBe(820);
    expect(await later.prune()).toBe(2);
    expect(later.messages).toEqual(messages(820, 205, 100));
  });

  it("still opens after two processes' opens (the older head's last) prune in reverse order", async () => {
    const [mine, theirs] = await twoProcesses();
    const id = `s-${randomUUID()}`;
    // The byte budget alone (about five pages of ten messages) decides where a window starts.
    const window = { messages: 10_000, bytes: 5_000 };
    await longHistory(new HistoryLog(theirs), id, 1_000, 100);
    const older = await new HistoryLog(mine, { window }).open(id);
    await (await new HistoryLog(theirs, { window }).open(id)).append(...messages(1_000, 20, 100));
    const newer = await new HistoryLog(theirs, { window }).open(id);
    expect(newer.start).toBeGreaterThan(older.start);
    expect(await newer.prune()).toBe(newer.start / 10);
    // The older open prunes last: it must not send the next open into the pages already deleted.
    await older.prune();
    expect(await mine.get(historyPrunedKey(id))).toEqual({
      v: 1,
      kind: "history-pruned",
      data: { pages: newer.start / 10 },
    });
    const reopened = await new HistoryLog(mine, { window }).open(id);
    expect(reopened.count).toBe(1_020);
    expect(reopened.start).toBe(newer.start);
    expect(reopened.messages).toEqual(messages(newer.start, 1_020 - newer.start, 100));
    await reopened.append(message(1_020, 100));
    expect((await new HistoryLog(theirs, { window }).open(id)).messages.at(-1)).toEqual(message(1_020, 100));
  });

  it("keeps the highest mark when opens of several heads, in two processes, prune at once", async () => {
    const [mine, theirs] = await twoProcesses();
    const id = `s-${randomUUID()}`;
    const window = { messages: 10_000, bytes: 5_000 };
    await longHistory(new HistoryLog(theirs), id, 1_000, 100);
    const writer = await new HistoryLog(theirs, { window }).open(id);
    const opens = [];
    for (let i = 0; i < 6; i++) {
      opens.push(await new HistoryLog(i % 2 === 0 ? mine : theirs, { window }).open(id));
      await writer.append(...messages(1_000 + i * 10, 10, 100));
    }
    const highest = Math.max(...opens.map((history) => history.start)) / 10;
    await Promise.all(opens.toReversed().map((history) => history.prune()));
    expect(await theirs.get(historyPrunedKey(id))).toEqual({
      v: 1,
      kind: "history-pruned",
      data: { pages: highest },
    });
    const reopened = await new HistoryLog(mine, { window }).open(id);
    expect(reopened.messages).toEqual(messages(reopened.start, 1_060 - reopened.start, 100));
  });

  it("loses none of the newest messages when another process appends while one prunes", async () => {
    const [mine, theirs] = await twoProcesses();
    const id = `s-${randomUUID()}`;
    await longHistory(new HistoryLog(mine), id, 1_000, 100);
    const pruner = await new HistoryLog(mine, { window: WINDOW }).open(id);
    const writer = await new HistoryLog(theirs, { window: WINDOW }).open(id);
    const appends = Array.from({ length: 60 }, (_, i) => writer.append(message(1_000 + i, 100)));
    await Promise.all([pruner.prune(), ...appends]);
    const reopened = await new HistoryLog(theirs, { window: WINDOW }).open(id);
    expect(reopened.count).toBe(1_060);
    expect(reopened.messages.slice(-60)).toEqual(messages(1_000, 60, 100));
    expect(reopened.messages).toEqual(messages(reopened.start, 1_060 - reopened.start, 100));
    await reopened.prune();
    expect((await new HistoryLog(mine, { window: WINDOW }).open(id)).messages.at(-1)).toEqual(
      message(1_059, 100),
    );
  });
});

describe("history window at its real size", () => {
  it("opens 5,000 messages of 10 kB reading at most the byte budget, and prunes the rest", async () => {
    const store = await open("memory:");
    const space = store.space("history");
    const id = "long";
    await longHistory(new HistoryLog(space), id, 5_000, 10_000);
    const { read, space: counted } = metered(space);
    const history = await new HistoryLog(counted).open(id);
    // The old open read all 500 pages: about 50 MB.
    expect(read.bytes).toBeLessThanOrEqual(HISTORY_WINDOW.bytes + 100_500);
    expect(history.count).toBe(5_000);
    expect(history.messages.length).toBeLessThan(900);
    const pruned = await history.prune();
    expect(pruned).toBe(history.start / 10);
    const { read: again, space: recounted } = metered(space);
    await new HistoryLog(recounted).open(id);
    expect(again.bytes).toBeLessThanOrEqual(HISTORY_WINDOW.bytes + 100_500);
  });
});
