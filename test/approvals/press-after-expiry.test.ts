/**
 * A press (or typed answer) that arrives after an item's expiry time but before any timer here
 * expired it settles the item as expired itself: then, like a timer's expiry, it must hand back
 * the parked turn to resume when no turn in this process waits for the item, or the turn stays
 * parked at a closed card (another process's timer finds the item already settled).
 */
import pino from "pino";
import { beforeEach, describe, expect, it } from "vitest";
import { type ParkedTurn, parkTurn } from "../../src/approvals/parked-turn.js";
import { PendingHub } from "../../src/approvals/pending-hub.js";
import type { AskContext, ExpirySchedule } from "../../src/approvals/pending-hub-types.js";
import type { PendingApproval, PendingQuestion } from "../../src/approvals/pending-item.js";
import { PendingStore } from "../../src/approvals/pending-store.js";
import type { ConversationMessage } from "../../src/core/messages.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/store.js";
import { tempDir } from "../sessions/helpers/harness.js";
import { RecordingOutputs } from "../support/recording-output.js";

const target = { platform: "slack", workspace: "T1", channel: "C1", thread: "1.1" };
const ana = { platform: "slack", userId: "U_ANA", name: "Ana" };
const history: ConversationMessage[] = [
  { role: "user", content: "write" },
  {
    role: "assistant",
    content: null,
    tool_calls: [
      { id: "c1", type: "function", function: { name: "write_note", arguments: '{"text":"hi"}' } },
    ],
  },
];
const parked: ParkedTurn = parkTurn(
  "s1",
  { turnId: "t1", request: { prompt: "write", messages: [] }, startedAt: "2026-01-02T03:04:00.000Z" },
  history,
);
const noTimers: ExpirySchedule = { arm: () => undefined, clear: () => undefined, clearAll: () => undefined };

/** A PendingHub on `store` whose clock reads `now` (no expiry timers: only presses expire items). */
function hubOn(store: Store, outputs: RecordingOutputs, now = () => new Date()): PendingHub {
  return new PendingHub({
    store: new PendingStore(store),
    outputFor: outputs.factory,
    deliveries: { record: async () => undefined },
    timers: noTimers,
    config: { approvers: [], perChannel: {}, ttlMs: 60_000 },
    logger: pino({ level: "silent" }),
    now,
  });
}

describe("a press after the expiry time", () => {
  let store: Store;
  let outputs: RecordingOutputs;

  beforeEach(async () => {
    store = await createStore({ url: "memory:", dataDir: tempDir() });
    outputs = new RecordingOutputs();
  });

  const hub = (now?: () => Date) => hubOn(store, outputs, now);

  async function raise(h: PendingHub): Promise<string> {
    const context: AskContext = { sessionId: "s1", target, requester: ana, parked };
    const build = (argsHash: string): PendingApproval => ({
      ...h.base(context, "c1", argsHash),
      kind: "approval",
      tool: "write_note",
      argSummary: "write_note hi",
      reason: "writes",
      alwaysOptions: [],
    });
    void h.obtain(
      "approval",
      context,
      "c1",
      { tool: "write_note", args: { text: "hi" } },
      build,
      new AbortController().signal,
    );
    const out = outputs.for(target);
    const card = await outputs.until(() => out.latestCards.find((c) => c.buttons.length > 0), "card");
    return card.pendingId;
  }

  it("expires the item and returns the parked turn to resume when no turn here waits", async () => {
    const pendingId = await raise(hub());
    const later = hub(() => new Date(Date.now() + 120_000));
    const press = {
      kind: "card" as const,
      platform: "slack",
      pendingId,
      action: "once",
      user: { id: "U_ANA", name: "Ana" },
    };
    const pressed = await later.press(press, async () => parked);
    expect(pressed.result.status).toBe("expired");
    expect(pressed.resume).toBe(parked);
    // The timer that fires afterwards finds it settled: nobody else would resume the turn.
    expect(await later.expire(pendingId)).toBeUndefined();
  });
});

describe("a typed answer after the expiry time", () => {
  it("expires the question, is not consumed, and returns the parked turn to resume", async () => {
    const store = await createStore({ url: "memory:", dataDir: tempDir() });
    const outputs = new RecordingOutputs();
    const hub = (now?: () => Date) => hubOn(store, outputs, now);
    const asking = hub();
    const questions = [{ id: "q1", question: "Which?", options: ["a", "b"] }];
    const asked: ParkedTurn = parkTurn("s1", parked, [
      { role: "user", content: "ask" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "ask_user", arguments: "{}" } }],
      },
    ]);
    const context: AskContext = { sessionId: "s1", target, requester: ana, parked: asked };
    const build = (argsHash: string): PendingQuestion => ({
      ...asking.base(context, "c1", argsHash),
      kind: "question",
      questions,
      answers: {},
    });
    void asking.obtain(
      "question",
      context,
      "c1",
      { tool: "ask_user", args: {} },
      build,
      new AbortController().signal,
    );
    const out = outputs.for(target);
    await outputs.until(() => out.latestCards.find((c) => c.buttons.length > 0), "card");
    const later = hub(() => new Date(Date.now() + 120_000));
    const reply = { platform: "slack", user: { id: "U_ANA", name: "Ana" }, text: "a" };
    const answered = await later.answerText(async () => asked, "s1", reply, ["k1"]);
    expect(answered).toEqual({ result: undefined, resume: asked });
  });
});
