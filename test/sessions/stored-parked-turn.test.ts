/**
 * The parked turn a process that does not hold the session reads from the store for a press
 * (SessionCache.storedParkedTurn): its journal position counts the whole history, not only the
 * window read, and the history is read from the compaction summary's anchor on, as a load reads it.
 */
import pino from "pino";
import { describe, expect, it } from "vitest";
import type { ConversationMessage } from "../../src/core/messages.js";
import { InboundDedupe } from "../../src/sessions/inbound-dedupe.js";
import { SessionCache } from "../../src/sessions/session-cache.js";
import { SessionRecords } from "../../src/sessions/session-records.js";
import { TurnEndSaves } from "../../src/sessions/turn-end-saves.js";
import { HistoryLog } from "../../src/store/history-log.js";
import type { KeyValueSpace } from "../../src/store/store.js";
import { openStore, sessionRecord, tempDir } from "./helpers/harness.js";

const ID = "s-parked";
/** 99 older messages, then the turn's call waiting at a card: 100 in all, in pages of 10. */
const history: ConversationMessage[] = [
  ...Array.from(
    { length: 99 },
    (_, i): ConversationMessage =>
      i % 2 === 0
        ? { role: "user", content: `question ${i}` }
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

/** A session parked at a card on a fresh store, and a cache that reads it with the summary's anchor `anchor`. */
async function parkedSession(anchor: number | undefined) {
  const store = await openStore(tempDir());
  const records = new SessionRecords(store.space("sessions"));
  const startedAt = new Date(0).toISOString();
  await records.put({
    ...sessionRecord(ID),
    turns: 50,
    pendingTurn: { turnId: "t1", request: {}, startedAt, startedFrom: { how: "run", historyLength: 99 } },
  });
  // An open reads at most the newest 40 messages (pages 6 to 9) without an anchor.
  const window = { messages: 40, bytes: 64 * 1024 * 1024 };
  await (await new HistoryLog(store.space("history"), { pageSize: 10, window }).open(ID)).append(...history);
  const pages = countingPages(store.space("history"));
  const cache = new SessionCache({
    stores: {
      records,
      history: new HistoryLog(pages.space, { pageSize: 10, window }),
      journal: store.space("journal"),
      dedupe: new InboundDedupe(store),
      writesInOrder: store.writesInOrder,
      now: () => new Date(0),
      logger: pino({ level: "silent" }),
      compactionAnchor: async () => anchor,
    },
    capacity: 10,
    defaults: { mode: "interactive", provider: "p", model: "m" },
    newId: () => "unused",
    prepare: () => undefined,
    endSaves: new TurnEndSaves(pino({ level: "silent" })),
    isPinned: () => false,
  });
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
