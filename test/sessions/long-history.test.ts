/**
 * A session whose stored history is longer than the window an open reads (store/history-window.ts):
 * loading it reads only the newest pages and prunes the rest, the model is sent the stored
 * summary when its anchor was read, and a turn parked at a card across a restart still resumes.
 */
import { describe, expect, it } from "vitest";
import type { ConversationMessage } from "../../src/core/messages.js";
import { anchorHash } from "../../src/engine/compaction-state.js";
import { HistoryLog, historyPageKey } from "../../src/store/history-log.js";
import { HISTORY_WINDOW } from "../../src/store/history-window.js";
import { toVersioned } from "../../src/store/versioned.js";
import { RecordingOutput } from "../support/recording-output.js";
import { textStep, toolStep } from "../support/scripted-provider.js";
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

describe("a session with a history longer than an open reads", () => {
  it("loads its newest pages with the summary anchored in them, prunes the rest, and resumes a parked turn", async () => {
    const dataDir = tempDir();
    const runs = new ToolRuns();
    const first = await makeHarness({ dataDir, runs, steps: [textStep("hello")], overrides });
    await first.manager.start();
    await first.manager.receive(message("hi"));
    await first.manager.idle();
    await first.manager.drain(1_000);
    await first.store.close();

    // The history grows long while the session is not in memory; its summary covers all but the
    // last 20 messages (the whole history counts: 2 of the first turn, then the 1,000).
    const store = await openStore(dataDir);
    const log = new HistoryLog(store.space("history"));
    for (let from = 0; from < long.length; from += 250)
      await log.appendMany(ID, long.slice(from, from + 250));
    const covered = 2 + long.length - 20;
    const anchor = long[covered - 3] as ConversationMessage;
    const state = { covered, anchorHash: anchorHash(anchor), summary: "SUMMARY-K7", trimmed: false };
    await store.space("compaction").set(ID, toVersioned("compaction-state", state));
    await store.close();

    const second = await makeHarness({
      dataDir,
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
    expect(await second.manager.drain(1_000)).toEqual({ finished: 0, interrupted: 0, parked: 1 });
    // The pages before the window are gone; the window's first is there.
    const history = second.store.space("history");
    expect(await history.get(historyPageKey(ID, 0))).toBeUndefined();
    const bytesPerPage = 10 * 10_050;
    const kept = Math.floor(HISTORY_WINDOW.bytes / bytesPerPage);
    expect(await history.get(historyPageKey(ID, 100 - kept - 2))).toBeUndefined();
    expect(await history.get(historyPageKey(ID, 100 - kept + 2))).toBeDefined();
    await second.store.close();

    const third = await makeHarness({ dataDir, runs, steps: [textStep("done after restart")], overrides });
    await third.manager.start();
    expect((await pressCard(third, card, "once", ANA)).status).toBe("accepted");
    await third.manager.idle();
    expect(runs.count("c1")).toBe(1);
    expect(RecordingOutput.textOf(third.outputs.for(thread()).closedTurns.at(-1)!)).toBe(
      "done after restart",
    );
    expect(String(third.provider.requests[0]?.messages[0]?.content)).toContain("SUMMARY-K7");
    await third.store.close();
  });
});
