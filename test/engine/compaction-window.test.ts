/**
 * Compaction over a history read only from its window (store/history-window.ts): the engine is
 * told how many of the session's messages came before the history it got. A saved state counts
 * the whole history, so it applies whatever window a later engine gets (one whose anchor was not
 * read stands for what came before the window); what came before the window and no summary
 * covers is named dropped to the model, and the window is sent from its first turn.
 */
import { describe, expect, it } from "vitest";
import type { ConversationMessage } from "../../src/core/messages.js";
import { Compactor } from "../../src/engine/compaction.js";
import type { CompactionState, CompactionStatePort } from "../../src/engine/compaction-state.js";
import { textStep } from "../support/scripted-provider.js";
import { collect, makeHarness, makeRequest } from "./helpers/harness.js";

const DROPPED = "Some earlier turns were dropped without a summary to fit the context window.";
const requester = { userId: "U1", displayName: "Ann" };
const signal = new AbortController().signal;

/** Six turns: question n by U1, answer n. */
const history: ConversationMessage[] = [1, 2, 3, 4, 5, 6].flatMap((n) => [
  { role: "user" as const, content: `question ${n}`, meta: { by: "U1" } },
  { role: "assistant" as const, content: `answer ${n}` },
]);

function memoryPort(): CompactionStatePort & { saves: CompactionState[]; unused: string[] } {
  const saves: CompactionState[] = [];
  const unused: string[] = [];
  return {
    saves,
    unused,
    load: async () => saves.at(-1),
    save: async (state) => {
      saves.push(state);
    },
    notUsed: (reason) => {
      unused.push(reason);
    },
    summaryFailed: () => undefined,
  };
}

describe("compaction over a history window", () => {
  it("tells the model earlier turns were dropped when the history it gets starts later and no summary covers it", async () => {
    const h = makeHarness({ steps: [textStep("ok")], options: { historyStart: 40 } });
    await collect(h.engine.run(makeRequest({ messages: history.slice(8), prompt: "question 7" })));
    const system = String(h.provider.requests[0]?.messages[0]?.content);
    expect(system).toContain("<conversation-summary");
    expect(system).toContain(DROPPED);
    // A history read from its first message has nothing dropped.
    const whole = makeHarness({ steps: [textStep("ok")] });
    await collect(whole.engine.run(makeRequest({ messages: history, prompt: "question 7" })));
    expect(String(whole.provider.requests[0]?.messages[0]?.content)).not.toContain(DROPPED);
  });

  it("saves the boundary in the session's whole history, and a later window from the anchor's page applies it", async () => {
    const port = memoryPort();
    const first = new Compactor(2, port, 2);
    await first.restore(history.slice(2));
    await first.compact(history.slice(2), async () => "- Ann (U1) asked questions 1 to 4", signal, requester);
    // Summarised up to the fifth turn's start: message 8 of the session, 6 of the window.
    expect(port.saves).toEqual([expect.objectContaining({ covered: 8, trimmed: true })]);

    const later = new Compactor(2, port, 6);
    await later.restore(history.slice(6));
    const view = later.view(history.slice(6));
    expect(view.summary).toContain("- Ann (U1) asked questions 1 to 4");
    expect(view.messages).toEqual(history.slice(8));
    expect(port.unused).toEqual([]);
  });

  it("keeps a saved state whose anchor was not read: its summary, and the dropped wording for a gap after it", async () => {
    const port = memoryPort();
    const whole = new Compactor(4, port);
    await whole.restore(history);
    const result = await whole.compact(history, async () => "SUM-A", signal, requester);
    expect(result?.trimmed).toBe(false);
    expect(port.saves.at(-1)).toMatchObject({ covered: 4, trimmed: false });

    // The history given starts where the summary ends: nothing is missing.
    const next = new Compactor(2, port, 4);
    await next.restore(history.slice(4));
    expect(next.view(history.slice(4))).toEqual({ summary: "SUM-A", messages: history.slice(4) });
    // It starts a turn later: that turn is in no summary.
    const past = new Compactor(2, port, 6);
    await past.restore(history.slice(6));
    expect(past.view(history.slice(6))).toEqual({
      summary: `SUM-A\n\n${DROPPED}`,
      messages: history.slice(6),
    });
    expect(port.unused).toEqual([]);
    // A later compaction builds on its summary, and what it saves says turns were dropped.
    const inputs: string[] = [];
    const summarise = async (input: string) => {
      inputs.push(input);
      return "S+";
    };
    await past.compact(history.slice(6), summarise, signal, requester);
    expect(inputs[0]).toContain("SUM-A");
    expect(port.saves.at(-1)).toMatchObject({ covered: 8, summary: "S+", trimmed: true });
  });

  it("sends a history read from inside a tool exchange from its first turn, with the dropped wording", () => {
    const exchange: ConversationMessage[] = [
      { role: "tool", tool_call_id: "t1", content: "result 1" },
      { role: "assistant", content: "answer 1" },
      ...history.slice(0, 4),
    ];
    const compactor = new Compactor(2, undefined, 30);
    expect(compactor.view(exchange)).toEqual({ summary: DROPPED, messages: history.slice(0, 4) });
    // One turn longer than the window: after its leading tool results.
    const call: ConversationMessage = {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "t2", type: "function", function: { name: "read_note", arguments: "{}" } }],
    };
    const inTurn: ConversationMessage[] = [
      exchange[0]!,
      call,
      { role: "tool", tool_call_id: "t2", content: "r" },
    ];
    expect(compactor.view(inTurn).messages).toEqual(inTurn.slice(1));
    // Read from the session's first message, the history is sent whole.
    expect(new Compactor(2).view(exchange)).toEqual({ summary: undefined, messages: exchange });
  });
});
