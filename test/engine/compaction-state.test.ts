/**
 * The compaction state outlives the engine that wrote it: a new engine for the same session (a
 * restart, an eviction, a rebuild) given the same CompactionStatePort starts from the saved
 * summary instead of overflowing again and summarising the whole history without it — also when
 * the history it gets is the one read back from the store (zod's copy, keys in the schema's
 * order) — and is told when a saved state is not used.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ConversationMessage } from "../../src/core/messages.js";
import { Compactor } from "../../src/engine/compaction.js";
import {
  type CompactionState,
  type CompactionStatePort,
  compactionStateSchema,
} from "../../src/engine/compaction-state.js";
import { ContextOverflowError } from "../../src/engine/provider/provider.js";
import { HistoryLog } from "../../src/store/history-log.js";
import type { Store } from "../../src/store/store.js";
import { openStore } from "../sessions/helpers/harness.js";
import { textStep } from "../support/scripted-provider.js";
import { storedHistory } from "../support/stored-history.js";
import { collect, completion, makeHarness, makeRequest, ofType } from "./helpers/harness.js";

const overflow = () => ({ error: new ContextOverflowError() });

/** A port on a variable, recording its saves and what it was told. */
function memoryPort(): CompactionStatePort & {
  saves: CompactionState[];
  unused: string[];
  failures: unknown[];
} {
  const saves: CompactionState[] = [];
  const unused: string[] = [];
  const failures: unknown[] = [];
  return {
    saves,
    unused,
    failures,
    load: async () => saves.at(-1),
    save: async (state) => {
      saves.push(state);
    },
    notUsed(reason) {
      unused.push(reason);
    },
    summaryFailed(error) {
      failures.push(error);
    },
  };
}

const open: Store[] = [];
afterEach(async () => {
  for (const store of open.splice(0)) await store.close();
});

/** `messages` as a new process reads them: appended to a real store's history log and loaded back. */
async function readBack(messages: readonly ConversationMessage[]): Promise<readonly ConversationMessage[]> {
  const store = await openStore();
  open.push(store);
  const log = new HistoryLog(store.space("history"));
  await log.openNew("s1").append(...messages);
  return storedHistory(store.space("history"), "s1");
}

const at = "2026-12-06T06:00:00.000Z";
const requester = { userId: "U1", displayName: "Ann" };
const signal = new AbortController().signal;

/** Three turns whose first ends with `last` (keys in the order the engine builds them). */
function endingWith(last: ConversationMessage): ConversationMessage[] {
  return [
    { role: "user", content: "deploy it", meta: { at, by: "U1" } },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "c1", type: "function", function: { name: "ask_user", arguments: "{}" } }],
      meta: { at },
    },
    last,
    { role: "user", content: "second", meta: { at, by: "U1" } },
    { role: "assistant", content: "ok", meta: { at } },
    { role: "user", content: "third", meta: { at, by: "U1" } },
  ];
}

const answeredAsk: ConversationMessage = {
  role: "tool",
  tool_call_id: "c1",
  content: "yes",
  meta: { at, status: "ok", by: "U1" } as ConversationMessage["meta"],
};
const imageResult: ConversationMessage = {
  role: "tool",
  tool_call_id: "c1",
  content: "x".repeat(100_000),
  attachments: [
    {
      kind: "image",
      path: "/w/a.png",
      name: "a.png",
      bytes: 10,
      mediaType: "image/png",
      width: 1,
      height: 1,
    },
  ],
  meta: { at },
};

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
      b.engine.run(makeRequest({ messages: a.history.messages, prompt: "question 5", turnId: "t2" })),
    );
    expect(ofType(first, "compaction-started")).toHaveLength(0);
    expect(String(b.provider.requests[0]?.messages[0]?.content)).toContain("CONSTRAINT-X9");
    expect(b.provider.requests[0]?.messages.map((m) => m.content)).not.toContain("question 1");

    const second = await collect(
      b.engine.run(makeRequest({ messages: b.history.messages, prompt: "question 6", turnId: "t3" })),
    );
    expect(completion(second).status).toBe("completed");
    expect(String(b.provider.requests[2]?.messages[1]?.content)).toMatch(
      /^Summary of what came before:\n {2}- Ann \(U1\) set CONSTRAINT-X9\n/,
    );
    expect(port.saves.at(-1)).toMatchObject({ summary: "- s2" });
  });

  it("ignores a saved state built on another history, and tells the port why", async () => {
    const port = memoryPort();
    await port.save(
      compactionStateSchema.parse({
        covered: 2,
        anchor: JSON.stringify({ role: "assistant", content: "other" }),
        summary: "S",
        trimmed: false,
      }),
    );
    const h = makeHarness({ steps: [textStep("ok")], options: { compactionState: port } });
    await collect(h.engine.run(makeRequest({ messages: history, prompt: "question 4" })));
    expect(String(h.provider.requests[0]?.messages[0]?.content)).not.toContain("<conversation-summary");
    expect(h.provider.requests[0]?.messages.map((m) => m.content)).toContain("question 1");
    expect(port.unused).toEqual(["the history's message 2 is not the one it was built on"]);
  });

  for (const [label, last] of [
    ["an answered ask_user (meta at, status, by)", answeredAsk],
    ["a tool result with an image (bytes before mediaType)", imageResult],
  ] as const) {
    it(`applies the saved state to the history read back from the store when a turn ended with ${label}`, async () => {
      const live = endingWith(last);
      const port = memoryPort();
      const first = new Compactor(2, port);
      await first.restore(live);
      expect((await first.compact(live, async () => "SUMMARY", signal, requester))?.removedMessages).toBe(3);

      const stored = await readBack(live);
      expect(stored).toEqual(live);
      const second = new Compactor(2, port);
      await second.restore(stored);
      expect(second.view(stored)).toEqual({ summary: "SUMMARY", messages: stored.slice(3) });
      expect(port.unused).toEqual([]);
      // The anchor is a hash: the covered message itself (a 100,000-character result) is not saved.
      expect(JSON.stringify(port.saves[0]).length).toBeLessThan(200);
    });
  }

  it("reads a state saved with the whole anchor message and applies it to the history read back", async () => {
    const live = endingWith(answeredAsk);
    const port = memoryPort();
    const saved = { covered: 3, anchor: JSON.stringify(live[2]), summary: "EARLIER", trimmed: false };
    await port.save(compactionStateSchema.parse(saved));
    const compactor = new Compactor(2, port);
    const stored = await readBack(live);
    await compactor.restore(stored);
    expect(compactor.view(stored)).toEqual({ summary: "EARLIER", messages: stored.slice(3) });
    expect(() => compactionStateSchema.parse({ ...saved, anchor: "{not json" })).toThrow(
      /anchor is not JSON/,
    );
  });
});
