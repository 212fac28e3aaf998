/**
 * A session whose stored history is longer than the window an open reads (store/history-window.ts):
 * loading it reads only the newest pages and prunes the rest, the model is sent the stored
 * summary when its anchor was read, and a turn parked at a card across a restart still resumes.
 */
import { describe, expect, it } from "vitest";
import type { ConversationMessage } from "../../src/core/messages.js";
import { anchorHash } from "../../src/engine/compaction-state.js";
import { HistoryLog } from "../../src/store/history-log.js";
import { historyPageKey } from "../../src/store/history-records.js";
import { HISTORY_WINDOW } from "../../src/store/history-window.js";
import type { KeyValueSpace, Store, StoreNamespace } from "../../src/store/store.js";
import { SessionRecords } from "../../src/sessions/session-records.js";
import { toVersioned } from "../../src/store/versioned.js";
import { RecordingOutput } from "../support/recording-output.js";
import { textStep, toolStep } from "../support/scripted-provider.js";
import { WrappedStore } from "../support/wrapped-store.js";
import { ANA, makeHarness, message, openStore, pressCard, tempDir, thread } from "./helpers/harness.js";
import { ToolRuns } from "./helpers/test-tools.js";

const ID = "s-long";
const overrides = { newId: () => ID };

/** 1,000 messages of 10 kB: 10 MB, past the window's 8 MiB. */
const long: ConversationMessage[] = Array.from({ length: 1_000 }, (_, i) =>
  i % 2 === 0
    ? { role: "user", content: `old question ${i} `.padEnd(10_000, "q"), meta: { by: ANA.id } }
    : { role: "assistant", content: `old answer ${i} `.padEnd(10_000, "a") },
);

/** A store counting the history pages read from it. */
class PageCountingStore extends WrappedStore {
  pagesRead = 0;
  protected wrap(namespace: StoreNamespace, inner: KeyValueSpace): KeyValueSpace {
    if (namespace !== "history") return inner;
    const counted = (key: string, value: unknown) => {
      if (key.startsWith("page:") && value !== undefined) this.pagesRead += 1;
    };
    return {
      ...inner,
      get: async (key) => {
        const value = await inner.get(key);
        counted(key, value);
        return value as never;
      },
      getMany: async (keys) => {
        const values = inner.getMany
          ? await inner.getMany(keys)
          : await Promise.all(keys.map((k) => inner.get(k)));
        for (const [i, key] of keys.entries()) counted(key, values[i]);
        return values as never;
      },
      set: (key, value, ttl) => inner.set(key, value, ttl),
      delete: (key) => inner.delete(key),
      setIfAbsent: (key, value, ttl) => inner.setIfAbsent(key, value, ttl),
      replaceIf: (key, expected, value, ttl) => inner.replaceIf(key, expected, value, ttl),
      deleteIf: (key, expected) => inner.deleteIf(key, expected),
      ...(inner.setMany ? { setMany: (entries) => inner.setMany!(entries) } : {}),
    };
  }
}

/** A session of one turn ("hi", "hello"), stored in a new data folder (resolves with it) and shut down. */
async function oneTurnSession(): Promise<string> {
  const dataDir = tempDir();
  const first = await makeHarness({ dataDir, steps: [textStep("hello")], overrides });
  await first.manager.start();
  await first.manager.receive(message("hi"));
  await first.manager.idle();
  await first.manager.drain(1_000);
  await first.store.close();
  return dataDir;
}

/**
 * A session of one turn ("hi", "hello") whose history then grows by the 1,000 long messages while
 * it is not in memory — with a summary covering all but the last 20 messages when `summary`.
 */
async function longSession(summary: boolean): Promise<{ dataDir: string; covered: number }> {
  const dataDir = await oneTurnSession();
  const store = await openStore(dataDir);
  const log = new HistoryLog(store.space("history"));
  const writer = await log.open(ID);
  for (let from = 0; from < long.length; from += 250) await writer.append(...long.slice(from, from + 250));
  // The whole history counts: 2 messages of the first turn, then the 1,000.
  const covered = 2 + long.length - 20;
  const anchor = long[covered - 3] as ConversationMessage;
  const state = { covered, anchorHash: anchorHash(anchor), summary: "SUMMARY-K7", trimmed: false };
  if (summary) await store.space("compaction").set(ID, toVersioned("compaction-state", state));
  await store.close();
  return { dataDir, covered };
}

describe("a session with a history longer than an open reads", () => {
  it("loads only the pages from its summary's anchor on, and resumes a turn parked at a card across a restart", async () => {
    const { dataDir, covered } = await longSession(true);
    const runs = new ToolRuns();
    const counting = new PageCountingStore(await openStore(dataDir));
    const second = await makeHarness({
      dataDir,
      store: counting,
      runs,
      steps: [toolStep(["c1", "write_note", { text: "a" }])],
      overrides,
    });
    await second.manager.start();
    await second.manager.receive(message("write a"));
    const out = second.outputs.for(thread());
    const card = await second.outputs.until(() => out.latestCards[0], "card");
    const sent = second.provider.requests[0];
    expect(String(sent?.messages[0]?.content)).toContain("SUMMARY-K7");
    expect(sent?.messages.map((m) => String(m.content).slice(0, 20))).toEqual([
      expect.anything(),
      ...long.slice(covered - 2).map((m) => String(m.content).slice(0, 20)),
      expect.stringContaining("write a"),
    ]);
    // Read from the anchor's page (message 981 of 1,002: pages 98 to 100), not the whole 10 MB.
    expect(counting.pagesRead).toBe(3);
    expect(await second.manager.drain(1_000)).toEqual({ finished: 0, interrupted: 0, parked: 1 });
    await second.store.close();

    const third = await makeHarness({ dataDir, runs, steps: [textStep("done after restart")], overrides });
    await third.manager.start();
    expect((await pressCard(third, card, "once", ANA)).status).toBe("accepted");
    await third.manager.idle();
    expect(runs.count("c1")).toBe(1);
    const closed = third.outputs.for(thread()).closedTurns.at(-1);
    expect(closed && RecordingOutput.textOf(closed)).toBe("done after restart");
    expect(String(third.provider.requests[0]?.messages[0]?.content)).toContain("SUMMARY-K7");
    await third.store.close();
  });

  it("without a summary, reads the newest 8 MiB, prunes the pages before them and tells the model turns were dropped", async () => {
    const { dataDir } = await longSession(false);
    const second = await makeHarness({ dataDir, steps: [textStep("ok")], overrides });
    await second.manager.start();
    await second.manager.receive(message("what now"));
    await second.manager.idle();
    const sent = second.provider.requests[0];
    expect(String(sent?.messages[0]?.content)).toContain(
      "Some earlier turns were dropped without a summary to fit the context window.",
    );
    expect(sent?.messages.map((m) => m.content)).not.toContain("hi");
    // Pages of about 100 kB: those before the newest 8 MiB are gone, the window's are there.
    const kept = Math.floor(HISTORY_WINDOW.bytes / (10 * 10_050));
    const history = second.store.space("history");
    expect(await history.get(historyPageKey(ID, 0))).toBeUndefined();
    expect(await history.get(historyPageKey(ID, 100 - kept - 2))).toBeUndefined();
    expect(await history.get(historyPageKey(ID, 100 - kept + 2))).toBeDefined();
    await second.manager.drain(1_000);
    await second.store.close();
  });

  it("with a window starting inside a tool exchange, sends it from its first turn (never a result without its call)", async () => {
    const dataDir = await oneTurnSession();
    // 1,005 cycles of question, call, result, answer: 4,022 messages in all, past the window's
    // 4,000; it starts at a page's first message, 20 of the session: the result r4.
    const cycles: ConversationMessage[] = Array.from({ length: 1_005 }, (_, k): ConversationMessage[] => [
      { role: "user", content: `q${k}`, meta: { by: ANA.id } },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: `t${k}`, type: "function", function: { name: "read_note", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: `t${k}`, content: `r${k}` },
      { role: "assistant", content: `a${k}` },
    ]).flat();
    const store = await openStore(dataDir);
    const log = new HistoryLog(store.space("history"));
    const writer = await log.open(ID);
    for (let from = 0; from < cycles.length; from += 500)
      await writer.append(...cycles.slice(from, from + 500));
    await store.close();

    const second = await makeHarness({ dataDir, steps: [textStep("ok")], overrides });
    await second.manager.start();
    await second.manager.receive(message("what now"));
    await second.manager.idle();
    const sent = second.provider.requests[0]?.messages ?? [];
    expect(String(sent[0]?.content)).toContain("Some earlier turns were dropped without a summary");
    expect(sent[1]).toMatchObject({ role: "user", content: expect.stringContaining("q5") });
    await second.manager.drain(1_000);
    await second.store.close();
  });
});

describe("a record stored before starters were kept, with a window past its first page", () => {
  /** Drop the record's starter, as records stored before it were kept. */
  async function legacy(store: Store): Promise<void> {
    const records = new SessionRecords(store.space("sessions"));
    const { startedBy: _dropped, ...record } = (await records.get(ID))!;
    await records.put(record);
  }

  it("names its starter from the first page, which it keeps until the record is saved with them", async () => {
    const { dataDir } = await longSession(false);
    const store = await openStore(dataDir);
    await legacy(store);
    await store.close();

    const second = await makeHarness({ dataDir, steps: [textStep("ok")], overrides });
    await second.manager.start();
    expect(await second.manager.command(thread(), ANA, "status", [])).toMatch(/Started by: .*\(id U_ANA\)/);
    const history = second.store.space("history");
    expect(await history.get(historyPageKey(ID, 0))).toBeDefined();
    // A turn saves the record, with its starter: the next load prunes.
    await second.manager.receive(message("what now"));
    await second.manager.idle();
    await second.manager.drain(1_000);
    await second.store.close();
    const third = await makeHarness({ dataDir, steps: [], overrides });
    await third.manager.start();
    expect(await third.manager.command(thread(), ANA, "status", [])).toMatch(/Started by: .*\(id U_ANA\)/);
    expect(await third.store.space("history").get(historyPageKey(ID, 0))).toBeUndefined();
    await third.manager.drain(1_000);
    await third.store.close();
  });
});
