/**
 * A tool call's pending item and tool-start journal entry are kept under its turn's id with the
 * call's (engine/turn-call-key.ts): a model re-sending an earlier turn's call id — one the window
 * an open reads no longer holds — is asked again, and an earlier turn's start does not make the
 * call read as started. Items and journal entries stored before (keyed by the call id alone) still
 * serve the turn they were made in: a turn parked at a card across the upgrade resumes on a press.
 */
import { describe, expect, it } from "vitest";
import { decodePending, encodePending } from "../../src/approvals/pending-codec.js";
import type { ConversationMessage } from "../../src/core/messages.js";
import { anchorHash } from "../../src/engine/compaction-state.js";
import { SessionRecords } from "../../src/sessions/session-records.js";
import { HistoryLog } from "../../src/store/history-log.js";
import type { Store } from "../../src/store/store.js";
import { toVersioned } from "../../src/store/versioned.js";
import { TOOL_RESULT } from "../../src/engine/tool-results.js";
import { textStep, toolStep } from "../support/scripted-provider.js";
import { storedHistory } from "../support/stored-history.js";
import { ANA, makeHarness, message, openStore, pressCard, tempDir, thread } from "./helpers/harness.js";
import { parkAtWriteCard } from "./helpers/parked-card.js";
import { ToolRuns } from "./helpers/test-tools.js";

const ID = "s-keys";
const overrides = { newId: () => ID };

/** When the session's turn in progress started. */
async function turnStart(store: Store): Promise<{ turnId: string; startedAt: string }> {
  const record = await new SessionRecords(store.space("sessions")).get(ID);
  return record!.pendingTurn!;
}

/**
 * Press "once" on `card` in a new process and let the turn end; what it gives back: how many other
 * cards the process showed and the tool result the model was sent.
 */
async function pressAfterRestart(dataDir: string, runs: ToolRuns, card: { pendingId: string }) {
  const second = await makeHarness({ dataDir, runs, steps: [textStep("done")], overrides });
  await second.manager.start();
  expect((await pressCard(second, card, "once", ANA)).status).toBe("accepted");
  await second.manager.idle();
  const out = second.outputs.for(thread());
  const cards = out.latestCards.filter((c) => c.pendingId !== card.pendingId).length;
  const tool = second.provider.lastRequest.messages.find((m) => m.role === "tool");
  await second.manager.drain(1_000);
  await second.store.close();
  return { cards, tool };
}

describe("call ids reused across turns", () => {
  it("asks again for a call whose id an approved call before the read window had", async () => {
    const dataDir = tempDir();
    const runs = new ToolRuns();
    const card = await parkAtWriteCard(dataDir, runs, overrides);
    await pressAfterRestart(dataDir, runs, card);
    expect(runs.count("c1")).toBe(1);

    // Later turns and a summary covering all but the last two messages: the window starts past c1.
    const store = await openStore(dataDir);
    const log = new HistoryLog(store.space("history"));
    const filler: ConversationMessage[] = Array.from({ length: 40 }, (_, i) =>
      i % 2 === 0
        ? { role: "user", content: `q${i}`, meta: { by: ANA.id } }
        : { role: "assistant", content: `a${i}` },
    );
    await (await log.open(ID)).append(...filler);
    const all = await storedHistory(store.space("history"), ID);
    const covered = all.length - 2;
    const state = { covered, anchorHash: anchorHash(all[covered - 1]), summary: "S", trimmed: false };
    await store.space("compaction").set(ID, toVersioned("compaction-state", state));
    await store.close();

    const third = await makeHarness({
      dataDir,
      runs,
      steps: [toolStep(["c1", "write_note", { text: "a" }]), textStep("done again")],
      overrides,
    });
    await third.manager.start();
    await third.manager.receive(message("write a again"));
    const out = third.outputs.for(thread());
    await third.outputs.until(() => out.latestCards[0] ?? out.closedTurns[0], "a card or the turn's end");
    // The new call is asked about, not run on the earlier call's approval.
    expect({ cards: out.latestCards.length, runs: runs.runs.length }).toEqual({ cards: 1, runs: 1 });
    await third.manager.drain(1_000);
    await third.store.close();
  });

  it("runs a call whose id an earlier turn's started call had (journaled under the id alone)", async () => {
    const dataDir = tempDir();
    const runs = new ToolRuns();
    const card = await parkAtWriteCard(dataDir, runs, overrides);
    const store = await openStore(dataDir);
    const { startedAt } = await turnStart(store);
    const before = new Date(Date.parse(startedAt) - 60_000).toISOString();
    await store.space("journal").set(`${ID}:c1`, before);
    await store.close();

    const { cards, tool } = await pressAfterRestart(dataDir, runs, card);
    expect({ cards, runs: runs.count("c1") }).toEqual({ cards: 0, runs: 1 });
    expect(tool?.content).not.toBe(TOOL_RESULT.interruptedWhileRunning);
  });
});

describe("items and journal entries stored before turn-call keys", () => {
  it("a turn parked at a card whose item is indexed by the call id alone resumes on a press", async () => {
    const dataDir = tempDir();
    const runs = new ToolRuns();
    const card = await parkAtWriteCard(dataDir, runs, overrides);
    const store = await openStore(dataDir);
    const { turnId } = await turnStart(store);
    const approvals = store.space("approvals");
    const { turnId: _named, ...legacy } = decodePending(await approvals.get(`item:${card.pendingId}`));
    expect(_named).toBe(turnId);
    await approvals.set(`item:${card.pendingId}`, encodePending(legacy));
    await approvals.delete(`turn-call:${ID}:${turnId}:c1`);
    await approvals.set(`call:${ID}:c1`, card.pendingId);
    await store.close();

    const { cards } = await pressAfterRestart(dataDir, runs, card);
    expect({ cards, runs: runs.count("c1") }).toEqual({ cards: 0, runs: 1 });
  });

  it("a call journaled under its id alone since its turn started is answered 'interrupted', not run", async () => {
    const dataDir = tempDir();
    const runs = new ToolRuns();
    const card = await parkAtWriteCard(dataDir, runs, overrides);
    const store = await openStore(dataDir);
    const { startedAt } = await turnStart(store);
    await store.space("journal").set(`${ID}:c1`, startedAt);
    await store.close();

    const { tool } = await pressAfterRestart(dataDir, runs, card);
    expect(runs.count("c1")).toBe(0);
    expect(tool?.content).toBe(TOOL_RESULT.interruptedWhileRunning);
  });
});
