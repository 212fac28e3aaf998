/**
 * Live history (sessions/live-history.ts): opening a record's history for a load, counted in the
 * keys read from the store — the first page, read apart for a record that has no starter yet, is
 * read with the head and pruned mark the open just read, not after reading them again.
 */
import os from "node:os";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ConversationMessage } from "../../src/core/messages.js";
import { openRecordHistory } from "../../src/sessions/live-history.js";
import { createStore } from "../../src/store/create-store.js";
import { HistoryLog } from "../../src/store/history-log.js";
import { historyHeadKey, historyPageKey, historyPrunedKey } from "../../src/store/history-records.js";
import type { KeyValueSpace, Store } from "../../src/store/store.js";
import { sessionRecord, thread } from "./helpers/harness.js";

const ID = "slack:T1:C1:1.2";
const WINDOW = { messages: 20, bytes: 1024 * 1024 };

/** `space` recording every key read from it, through get and getMany alike. */
function keysRead(space: KeyValueSpace) {
  const keys: string[] = [];
  const wrapped: KeyValueSpace = {
    get: (key) => {
      keys.push(key);
      return space.get(key);
    },
    getMany: (wanted) => {
      keys.push(...wanted);
      return (
        space.getMany ? space.getMany(wanted) : Promise.all(wanted.map((key) => space.get(key)))
      ) as never;
    },
    set: (key, value, ttl) => space.set(key, value, ttl),
    delete: (key) => space.delete(key),
    setIfAbsent: (key, value, ttl) => space.setIfAbsent(key, value, ttl),
    replaceIf: (key, expected, value, ttlMs) => space.replaceIf(key, expected, value, ttlMs),
    deleteIf: (key, expected) => space.deleteIf(key, expected),
    ...(space.setMany ? { setMany: (entries) => space.setMany!(entries) } : {}),
  };
  return { keys, space: wrapped };
}

const turn = (n: number): ConversationMessage[] => [
  { role: "user", content: `q${n}`, meta: { by: n === 0 ? "U-starter" : "U-other" } },
  { role: "assistant", content: `a${n}` },
];

describe("openRecordHistory", () => {
  let store: Store;
  beforeEach(async () => {
    store = await createStore({ url: "memory:", dataDir: os.tmpdir() });
  });
  afterEach(async () => {
    await store.close();
  });

  it("reads the head and the pruned mark once when the first page is read apart for a record's starter", async () => {
    const space = store.space("history");
    await new HistoryLog(space, { pageSize: 10 })
      .openNew(ID)
      .append(...Array.from({ length: 30 }, (_, n) => turn(n)).flat());
    const record = sessionRecord(ID, { key: ID, target: thread() });
    const { keys, space: counted } = keysRead(space);
    const stores = {
      history: new HistoryLog(counted, { window: WINDOW }),
      logger: pino({ level: "silent" }),
    };

    const { log, opening } = await openRecordHistory(record, stores);

    // 60 messages in pages of 10, a window of 20: pages 4 and 5, and page 0 for the starter.
    expect(log.start).toBe(40);
    expect(opening[0]).toMatchObject({ content: "q0", meta: { by: "U-starter" } });
    expect(keys.filter((key) => key === historyHeadKey(ID))).toHaveLength(1);
    expect(keys.filter((key) => key === historyPrunedKey(ID))).toHaveLength(1);
    expect(keys.filter((key) => key === historyPageKey(ID, 0))).toHaveLength(1);
    expect(keys).toHaveLength(2 + 2 + 1);
  });
});
