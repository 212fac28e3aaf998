/**
 * Turn recovery (sessions/turn-recovery.ts) on a history read from its window: the turn marker
 * counts the session's whole history, the history given starts `historyStart` messages in.
 */
import { describe, expect, it } from "vitest";
import type { TurnMarker } from "../../src/approvals/parked-turn.js";
import type { ConversationMessage } from "../../src/core/messages.js";
import { recoveryOf } from "../../src/sessions/turn-recovery.js";

const marker = (how: "run" | "retry", historyLength: number): TurnMarker => ({
  turnId: "t1",
  request: {},
  startedAt: "2026-12-06T06:00:00.000Z",
  startedFrom: { how, historyLength },
});
const turn = (n: number): ConversationMessage[] => [
  { role: "user", content: `question ${n}` },
  { role: "assistant", content: `answer ${n}` },
];
const failed: ConversationMessage = { role: "assistant", content: null, meta: { error: "provider down" } };

describe("recoveryOf on a history window", () => {
  it("finds the turn's opening by its position in the whole history", () => {
    // The session holds 500 messages; the window is its last 4 (turns 249 and 250).
    const window = [...turn(249), ...turn(250)];
    // The turn started at 498 and its question reached the history: it is done, not run again.
    expect(recoveryOf(marker("run", 498), window, 496)).toBe("done");
    // It started at 500: its opening never reached the history.
    expect(recoveryOf(marker("run", 500), window, 496)).toBe("rerun");
  });

  it("retries a retry that wrote nothing, counting the messages before the window", () => {
    const window = [...turn(249), { role: "user", content: "question 250" } as const, failed];
    expect(recoveryOf(marker("retry", 500), window, 496)).toBe("retry");
    // A retry that began elsewhere in the history is over.
    expect(recoveryOf(marker("retry", 4), window, 496)).toBe("done");
  });

  it("resumes a turn whose opening came before the window (it wrote more than a window holds)", () => {
    // The turn's question is message 100; the window starts at 200 and holds only its tool steps.
    const window: ConversationMessage[] = [
      { role: "tool", tool_call_id: "c1", content: "big output" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c2", type: "function", function: { name: "read_note", arguments: "{}" } }],
      },
    ];
    expect(recoveryOf(marker("run", 100), window, 200)).toBe("resume");
    expect(recoveryOf(marker("run", 100), window.slice(0, 1), 200)).toBe("resume");
  });
});
