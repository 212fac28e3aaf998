/**
 * The compaction state outlives the engine that wrote it: a new engine for the same session (a
 * restart, an eviction, a rebuild) given the same CompactionStatePort starts from the saved
 * summary instead of overflowing again and summarising the whole history without it.
 */
import { describe, expect, it } from "vitest";
import type { CompactionState, CompactionStatePort } from "../../src/engine/compaction-state.js";
import { ContextOverflowError } from "../../src/engine/provider/provider.js";
import { textStep } from "../support/scripted-provider.js";
import { collect, completion, makeHarness, makeRequest, ofType } from "./helpers/harness.js";

const overflow = () => ({ error: new ContextOverflowError() });

/** A port on a variable, recording its saves. */
function memoryPort(): CompactionStatePort & { saves: CompactionState[] } {
  const saves: CompactionState[] = [];
  return {
    saves,
    load: async () => saves.at(-1),
    save: async (state) => {
      saves.push(state);
    },
  };
}

const history = [1, 2, 3].flatMap((n) => [
  { role: "user" as const, content: `question ${n}`, meta: { by: "U1" } },
  { role: "assistant" as const, content: `answer ${n}` },
]);

describe("compaction state across engines", () => {
  it("a new engine for the session starts from the saved summary, and folds it into its own next compaction", async () => {
    const port = memoryPort();
    const a = makeHarness({
      steps: [overflow(), textStep("- Ann (U1) set CONSTRAINT-X9"), textStep("ok")],
      options: { compactionState: port },
    });
    await collect(a.engine.run(makeRequest({ messages: history, prompt: "question 4" })));
    expect(port.saves).toEqual([
      expect.objectContaining({ covered: 4, summary: "- Ann (U1) set CONSTRAINT-X9", trimmed: false }),
    ]);

    const b = makeHarness({
      steps: [textStep("fits"), overflow(), textStep("- s2"), textStep("ok")],
      options: { compactionState: port },
    });
    const first = await collect(
      b.engine.run(makeRequest({ messages: a.engine.messages, prompt: "question 5", turnId: "t2" })),
    );
    expect(ofType(first, "compaction-started")).toHaveLength(0);
    expect(String(b.provider.requests[0]?.messages[0]?.content)).toContain("CONSTRAINT-X9");
    expect(b.provider.requests[0]?.messages.map((m) => m.content)).not.toContain("question 1");

    const second = await collect(
      b.engine.run(makeRequest({ messages: b.engine.messages, prompt: "question 6", turnId: "t3" })),
    );
    expect(completion(second).status).toBe("completed");
    expect(String(b.provider.requests[2]?.messages[1]?.content)).toMatch(
      /^Summary of what came before:\n {2}- Ann \(U1\) set CONSTRAINT-X9\n/,
    );
    expect(port.saves.at(-1)).toMatchObject({ summary: "- s2" });
  });

  it("ignores a saved state built on another history", async () => {
    const port = memoryPort();
    await port.save({
      covered: 2,
      anchor: JSON.stringify({ role: "assistant", content: "other" }),
      summary: "S",
      trimmed: false,
    });
    const h = makeHarness({ steps: [textStep("ok")], options: { compactionState: port } });
    await collect(h.engine.run(makeRequest({ messages: history, prompt: "question 4" })));
    expect(String(h.provider.requests[0]?.messages[0]?.content)).not.toContain("<conversation-summary");
    expect(h.provider.requests[0]?.messages.map((m) => m.content)).toContain("question 1");
  });
});
