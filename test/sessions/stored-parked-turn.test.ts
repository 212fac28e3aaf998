/**
 * The parked turn a process that does not hold the session reads from the store for a press
 * (SessionCache.storedParkedTurn): its journal position counts the whole history, not only the
 * window read, and the history is read from the compaction summary's anchor on, as a load reads
 * it — but nothing is pruned (on a real redis-server, two processes: the page with the starter
 * of a record stored without one is still there for the holder's load).
 */
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ConversationMessage } from "../../src/core/messages.js";
import { InboundDedupe } from "../../src/sessions/inbound-dedupe.js";
import { SessionCache } from "../../src/sessions/session-cache.js";
import { SessionRecords } from "../../src/sessions/session-records.js";
import { WorkspaceDownloads } from "../../src/sessions/workspace-downloads.js";
import { TurnEndSaves } from "../../src/sessions/turn-end-saves.js";
import { createStore } from "../../src/store/create-store.js";
import { HistoryLog } from "../../src/store/history-log.js";
import type { HistoryWindowBudget } from "../../src/store/history-window.js";
import type { KeyValueSpace, Store } from "../../src/store/store.js";
import { type RedisServer, startRedisServer } from "../support/redis-server.js";
import { openStore, sessionRecord, tempDir } from "./helpers/harness.js";

const ID = "s-parked";
/** 99 older messages (the first by U-first), then the turn's call waiting at a card: 100 in all, in pages of 10. */
const history: ConversationMessage[] = [
  ...Array.from(
    { length: 99 },
    (_, i): ConversationMessage =>
      i % 2 === 0
        ? { role: "user", content: `question ${i}`, meta: { by: i === 0 ? "U-first" : "U-other" } }
        : { role: "assistant", content: `answer ${i}` },
  ),
  {
    role: "assistant",
    content: "",
    tool_calls: [{ id: "c1", type: "function", function: { name: "write_note", arguments: '{"text":"a"}' } }],
  },
];

/** `space` with the history pages read from it counted. */
function countingPages(space: KeyValueSpace): { space: KeyValueSpace; pagesRead: () => number } {
  let pages = 0;
  const count = (keys: readonly string[]) => {
    pages += keys.filter((key) => key.startsWith("page:")).length;
  };
  const counted = new Proxy(space, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      if (prop === "get")
        return (key: string) => {
          count([key]);
          return target.get(key);
        };
      if (prop === "getMany")
        return (keys: readonly string[]) => {
          count(keys);
          return target.getMany?.(keys);
        };
      return value.bind(target);
    },
  });
  return { space: counted, pagesRead: () => pages };
}

/** An open reads at most the newest 40 messages (pages 6 to 9) without an anchor. */
const WINDOW: HistoryWindowBudget = { messages: 40, bytes: 64 * 1024 * 1024 };

/** A process's session cache on `store`, its history read through `history` (the store's by default). */
function cacheOn(store: Store, options: { anchor?: number; history?: KeyValueSpace } = {}): SessionCache {
  const records = new SessionRecords(store.space("sessions"));
  return new SessionCache({
    stores: {
      records,
      downloads: new WorkspaceDownloads(records.downloads, "/workspace", pino({ level: "silent" })),
      history: new HistoryLog(options.history ?? store.space("history"), { pageSize: 10, window: WINDOW }),
      journal: store.space("journal"),
      dedupe: new InboundDedupe(store),
      writesInOrder: store.writesInOrder,
      now: () => new Date(0),
      logger: pino({ level: "silent" }),
      compactionAnchor: async () => options.anchor,
    },
    capacity: 10,
    defaults: { mode: "interactive", provider: "p", model: "m" },
    newId: () => "unused",
    prepare: () => undefined,
    endSaves: new TurnEndSaves(pino({ level: "silent" })),
    isPinned: () => false,
  });
}

/** Session ID parked at a card on `store`, with `history`; its record has no starter. */
async function park(store: Store): Promise<void> {
  const startedAt = new Date(0).toISOString();
  await new SessionRecords(store.space("sessions")).put({
    ...sessionRecord(ID),
    turns: 50,
    pendingTurn: { turnId: "t1", request: {}, startedAt, startedFrom: { how: "run", historyLength: 99 } },
  });
  await new HistoryLog(store.space("history"), { pageSize: 10, window: WINDOW })
    .openNew(ID)
    .append(...history);
}

/** A session parked at a card on a fresh store, and a cache that reads it with the summary's anchor `anchor`. */
async function parkedSession(anchor: number | undefined) {
  const store = await openStore(tempDir());
  await park(store);
  const pages = countingPages(store.space("history"));
  const cache = cacheOn(store, { history: pages.space, ...(anchor === undefined ? {} : { anchor }) });
  return { cache, pagesRead: pages.pagesRead };
}

describe("a parked turn read from the store for a press", () => {
  it("reads from the summary's anchor on, and counts the whole history in its position", async () => {
    const { cache, pagesRead } = await parkedSession(85);
    const parked = await cache.storedParkedTurn(ID);
    expect(parked).toMatchObject({
      sessionId: ID,
      turnId: "t1",
      historyLength: 100,
      waiting: [{ callId: "c1", tool: "write_note", arguments: '{"text":"a"}' }],
    });
    // The anchor's page (8) and the last: not the 40-message window's four pages.
    expect(pagesRead()).toBe(2);
  });

  it("without a summary reads the window, its position still counting the messages before it", async () => {
    const { cache, pagesRead } = await parkedSession(undefined);
    expect((await cache.storedParkedTurn(ID))?.historyLength).toBe(100);
    expect(pagesRead()).toBe(4);
  });
});

describe("a parked turn read for a press by a process that does not hold the session (redis-server)", () => {
  let redis: RedisServer | undefined;
  const stores: Store[] = [];
  beforeAll(async () => {
    redis = await startRedisServer();
  }, 20_000);
  afterAll(async () => {
    await Promise.all(stores.splice(0).map((store) => store.close()));
    await redis?.stop();
  });
  /** One process's store on the shared redis-server. */
  async function processStore(): Promise<Store> {
    if (!redis) throw new Error("no redis-server");
    const store = await createStore({ url: redis.url, dataDir: tempDir() });
    stores.push(store);
    return store;
  }

  it("prunes nothing: the holder's load still finds the starter of a record stored without one", async () => {
    const [holder, other] = [await processStore(), await processStore()];
    // A record stored before starters were kept; its first message is Ana's.
    await park(holder);
    expect((await new SessionRecords(holder.space("sessions")).get(ID))?.startedBy).toBeUndefined();
    // The press reaches the other process: it reads the parked turn (a window of pages 6 to 9).
    expect((await cacheOn(other).storedParkedTurn(ID))?.historyLength).toBe(100);
    // The holder loads the session: its starter is the first message's author.
    const loaded = await cacheOn(holder).byId(ID);
    expect(loaded?.record.startedBy?.id).toBe("U-first");
  });
});
