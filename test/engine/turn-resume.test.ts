import { describe, expect, it } from "vitest";
import type { ConversationMessage } from "../../src/core/messages.js";
import type { PermissionMode } from "../../src/core/modes.js";
import type { Approver, PermissionRequest } from "../../src/engine/asking/ports.js";
import { TOOL_RESULT } from "../../src/engine/tool-results.js";
import { unansweredToolCalls } from "../../src/engine/history-calls.js";
import { textStep, toolStep } from "../support/scripted-provider.js";
import {
  collect,
  completion,
  expectNoOrphans,
  makeHarness,
  makeRequest,
  resultOf,
} from "./helpers/harness.js";

const call = (id: string, name: string, args: Record<string, unknown>) => ({
  id,
  type: "function" as const,
  function: { name, arguments: JSON.stringify(args) },
});

/** A turn persisted while waiting: c1 answered, c2 journaled as started, c3 waiting for approval. */
const suspended: ConversationMessage[] = [
  { role: "user", content: "update the files" },
  {
    role: "assistant",
    content: null,
    tool_calls: [
      call("c1", "write_file", { path: "a", content: "1" }),
      call("c2", "run_command", { command: "make" }),
      call("c3", "write_file", { path: "c", content: "3" }),
    ],
  },
  { role: "tool", tool_call_id: "c1", content: "write_file done" },
];

describe("resume", () => {
  it("never re-runs an answered call, answers a started one as interrupted, and processes the rest", async () => {
    const h = makeHarness({ steps: [textStep("all set")] });
    h.persistence.started.add("c1");
    h.persistence.started.add("c2");
    const turn = collect(h.engine.resume(makeRequest({ messages: suspended, prompt: "" })));
    await h.broker.next("c3");
    h.broker.approve("c3", "once");
    const events = await turn;
    expect(h.log.spans.map((s) => s.callId)).toEqual(["c3"]);
    expect(resultOf(h.history.messages, "c1")).toBe("write_file done");
    expect(resultOf(h.history.messages, "c2")).toBe(TOOL_RESULT.interruptedWhileRunning);
    expect(resultOf(h.history.messages, "c3")).toMatch(/write_file done/);
    expect(completion(events)).toMatchObject({ status: "completed", finalText: "all set" });
    expect(h.history.messages.filter((m) => m.role === "user")).toHaveLength(1); // no new user message
    expect(h.persistence.appended.map((m) => m.role)).toEqual(["tool", "tool", "assistant"]);
    expectNoOrphans(h.history.messages);
  });

  it("continues the loop when every call was answered before the restart", async () => {
    const h = makeHarness({ steps: [textStep("finished")] });
    const answered: ConversationMessage[] = [
      ...suspended,
      { role: "tool", tool_call_id: "c2", content: "ok" },
      { role: "tool", tool_call_id: "c3", content: "ok" },
    ];
    const events = await collect(h.engine.resume(makeRequest({ messages: answered })));
    expect(completion(events).status).toBe("completed");
    expect(h.log.spans).toEqual([]);
  });

  it("refuses when nothing waits for an answer", async () => {
    const h = makeHarness();
    const events = await collect(
      h.engine.resume(
        makeRequest({
          messages: [
            { role: "user", content: "x" },
            { role: "assistant", content: "y" },
          ],
        }),
      ),
    );
    expect(events).toEqual([
      { type: "error", message: expect.stringMatching(/Nothing to resume/), recoverable: false },
    ]);
    expect(h.provider.requests).toEqual([]);
  });

  it("a new run after an abandoned suspension answers the open calls first, never running them", async () => {
    const h = makeHarness({ steps: [textStep("ok")] });
    h.persistence.started.add("c2");
    await collect(h.engine.run(makeRequest({ messages: suspended, prompt: "never mind" })));
    expect(resultOf(h.history.messages, "c2")).toBe(TOOL_RESULT.interruptedWhileRunning);
    expect(resultOf(h.history.messages, "c3")).toBe(TOOL_RESULT.notStarted);
    expect(h.history.messages.at(-2)).toMatchObject({ role: "user", content: "never mind" });
    expect(h.log.spans).toEqual([]);
    expectNoOrphans(h.history.messages);
  });

  it("unansweredToolCalls looks only at the trailing assistant message", () => {
    expect(unansweredToolCalls(suspended).map((c) => c.id)).toEqual(["c2", "c3"]);
    expect(unansweredToolCalls([...suspended, { role: "user", content: "later" }])).toEqual([]);
  });

  it("a turn suspended by a real engine can be resumed by a fresh engine", async () => {
    const first = makeHarness({ steps: [toolStep(["w1", "write_file", { path: "a", content: "" }])] });
    const turn = collect(first.engine.run(makeRequest()));
    await first.broker.next("w1");
    // The process "dies" here: the journal holds the user and assistant messages.
    const persisted = [...first.persistence.appended];
    first.engine.interrupt();
    await turn;

    const second = makeHarness({ steps: [textStep("resumed")] });
    const resumed = collect(second.engine.resume(makeRequest({ messages: persisted })));
    await second.broker.next("w1");
    second.broker.approve("w1", "once");
    expect(completion(await resumed).status).toBe("completed");
    expect(second.log.spans.map((s) => s.callId)).toEqual(["w1"]);
  });
});

describe("resume: a waiting call already put to a person", () => {
  const waiting: ConversationMessage[] = [
    { role: "user", content: "write it" },
    { role: "assistant", content: null, tool_calls: [call("c1", "write_file", { path: "a", content: "1" })] },
  ];

  /** An approver holding a denied card for c1 (and none for any other call); `asked` logs the calls asked. */
  function deniedCardFor(asked: string[]): Approver {
    const approve = async (request: PermissionRequest) => {
      asked.push(request.callId);
      return "deny" as const;
    };
    return Object.assign(approve, { asked: async (callId: string) => callId === "c1" });
  }

  async function resumed(mode: PermissionMode, asked: string[]) {
    const h = makeHarness({
      steps: [textStep("ok")],
      grants: [{ kind: "tool", tool: "write_file" }],
      options: { approver: deniedCardFor(asked) },
    });
    await collect(h.engine.resume(makeRequest({ messages: waiting, prompt: "", mode })));
    return h;
  }

  it.each(["interactive", "auto"] as const)(
    "denied on its card, it stays denied in %s mode though a grant given since allows the tool",
    async (mode) => {
      const asked: string[] = [];
      const h = await resumed(mode, asked);
      expect(asked).toEqual(["c1"]);
      expect(h.log.spans).toEqual([]);
      expect(resultOf(h.history.messages, "c1")).toBe(TOOL_RESULT.deniedByUser);
    },
  );

  it("a call of a new turn is never looked up: the grant lets it run", async () => {
    const asked: string[] = [];
    const h = makeHarness({
      steps: [toolStep(["c9", "write_file", { path: "b", content: "2" }]), textStep("ok")],
      grants: [{ kind: "tool", tool: "write_file" }],
      options: { approver: deniedCardFor(asked) },
    });
    await collect(h.engine.run(makeRequest({})));
    expect({ asked, ran: h.log.spans.map((s) => s.callId) }).toEqual({ asked: [], ran: ["c9"] });
  });
});
