import { describe, expect, it } from "vitest";
import type { ConversationMessage } from "../../src/core/messages.js";
import { sessionKeyOf } from "../../src/core/thread-target.js";
import { SessionRecords } from "../../src/sessions/session-records.js";
import { storedHistory } from "../support/stored-history.js";
import type { Store } from "../../src/store/store.js";
import { textStep, toolStep } from "../support/scripted-provider.js";
import { CrashingStore } from "./helpers/crashing-store.js";
import { makeHarness, message, openStore, tempDir, thread } from "./helpers/harness.js";

const TEXT = "please answer me";
const KEYS = ["EvCrash", "C1:1700000000.000900"];
const ANSWER_KEYS = ["EvAnswer", "C1:1700000000.000950"];

/** What one thread's session holds in the store. */
async function stored(store: Store) {
  const records = new SessionRecords(store.space("sessions"));
  const id = await records.currentId(sessionKeyOf(thread()));
  const record = id === undefined ? undefined : await records.get(id);
  const history = id === undefined ? [] : await storedHistory(store.space("history"), id);
  return { record, history };
}

function answers(history: readonly ConversationMessage[]): string[] {
  return history.flatMap((m) =>
    m.role === "assistant" && typeof m.content === "string" && m.content !== "" ? [m.content] : [],
  );
}

/**
 * One "process" takes the message and dies after `writes` store writes; a new one is built on the
 * same SQLite file, the platform redelivers the message, and the stored session is returned.
 */
async function crashThenRedeliver(writes: number) {
  const dataDir = tempDir();
  const base = await openStore(dataDir);
  const crashing = new CrashingStore(base, writes);
  const first = await makeHarness({ store: crashing, dataDir, steps: [textStep("first answer")] });
  const event = message(TEXT, { keys: KEYS });
  try {
    await first.manager.start();
    await first.manager.receive(event);
  } catch {
    // The "process" died mid-intake: the platform gets no acknowledgement and redelivers.
  }
  await first.manager.idle();
  const second = await makeHarness({ store: base, dataDir, steps: [textStep("second answer")] });
  await second.manager.start();
  const redelivered = await second.manager.receive(event);
  await second.manager.idle();
  const result = { ...(await stored(base)), crashed: crashing.crashed, redelivered: redelivered.status };
  await base.close();
  return result;
}

describe("a crash at any write of intake and turn start (SQLite)", () => {
  it("answers the message exactly once after a restart and a redelivery, wherever the process died", async () => {
    const problems: string[] = [];
    let writes = 0;
    for (;;) {
      const { record, history, crashed, redelivered } = await crashThenRedeliver(writes);
      const users = history.filter((m) => m.role === "user").map((m) => m.content);
      const seen = {
        users,
        answers: answers(history).length,
        last: history.at(-1)?.role,
        queued: record?.queue.length,
        pending: record?.pendingTurn !== undefined,
      };
      const expected = { users: [TEXT], answers: 1, last: "assistant", queued: 0, pending: false };
      if (JSON.stringify(seen) !== JSON.stringify(expected))
        problems.push(`crash after ${writes} writes: ${JSON.stringify(seen)}`);
      if (!crashed) {
        expect(redelivered).toBe("duplicate");
        break;
      }
      writes++;
      expect(writes, "the intake path should need only a few writes").toBeLessThan(40);
    }
    expect(problems).toEqual([]);
    expect(writes).toBeGreaterThan(3);
  });
});

/** The results the history holds for one tool call. */
function toolResults(history: readonly ConversationMessage[], callId: string): string[] {
  return history.flatMap((m) => (m.role === "tool" && m.tool_call_id === callId ? [String(m.content)] : []));
}

/**
 * A turn parks at an ask_user question; a second "process" takes the asker's typed answer and dies
 * after `writes` store writes; a third is built on the same SQLite file and the platform redelivers
 * the answer. Returns the stored session.
 */
async function crashAnswerThenRedeliver(writes: number) {
  const dataDir = tempDir();
  const base = await openStore(dataDir);
  const asking = await makeHarness({
    store: base,
    dataDir,
    steps: [toolStep(["q1", "ask_user", { question: "Which color?", options: ["red", "blue"] }])],
  });
  await asking.manager.receive(message("pick a color"));
  const out = asking.outputs.for(thread());
  await asking.outputs.until(() => out.latestCards.find((c) => c.kind === "question"), "question card");
  await asking.manager.drain(0);
  const crashing = new CrashingStore(base, writes);
  const first = await makeHarness({ store: crashing, dataDir, steps: [textStep("first answer")] });
  const answer = message("green", { keys: ANSWER_KEYS });
  try {
    await first.manager.start();
    await first.manager.receive(answer);
  } catch {
    // The "process" died while taking the answer: the platform redelivers it.
  }
  await first.manager.idle();
  const second = await makeHarness({ store: base, dataDir, steps: [textStep("second answer")] });
  await second.manager.start();
  await second.manager.receive(answer);
  await second.manager.idle();
  const result = { ...(await stored(base)), crashed: crashing.crashed };
  await base.close();
  return result;
}

describe("a crash at any write of a typed answer to a pending question (SQLite)", () => {
  it("answers the question exactly once and starts no extra turn after a restart and a redelivery", async () => {
    const problems: string[] = [];
    let writes = 0;
    for (;;) {
      const { record, history, crashed } = await crashAnswerThenRedeliver(writes);
      const results = toolResults(history, "q1");
      const seen = {
        users: history.filter((m) => m.role === "user").map((m) => m.content),
        results: results.length,
        green: results.every((r) => r.includes("green")),
        answers: answers(history).length,
        last: history.at(-1)?.role,
        queued: record?.queue.length,
        pending: record?.pendingTurn !== undefined,
      };
      const expected = {
        users: ["pick a color"],
        results: 1,
        green: true,
        answers: 1,
        last: "assistant",
        queued: 0,
        pending: false,
      };
      if (JSON.stringify(seen) !== JSON.stringify(expected))
        problems.push(`crash after ${writes} writes: ${JSON.stringify(seen)}`);
      if (!crashed) break;
      writes++;
      expect(writes, "the answer path should need only a few writes").toBeLessThan(40);
    }
    expect(problems).toEqual([]);
    expect(writes).toBeGreaterThan(3);
  });
});
