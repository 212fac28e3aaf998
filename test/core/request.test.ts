import { describe, expect, it } from "vitest";
import { deepFreeze } from "../../src/core/deep-freeze.js";
import type { ConversationMessage } from "../../src/core/messages.js";
import {
  allowsTool,
  createRequest,
  effectiveMaxSteps,
  RUN_TO_COMPLETION_MAX_STEPS,
  requestFromJSON,
  requestToJSON,
  withMessages,
  withMode,
} from "../../src/core/request.js";
import { isDeepFrozen } from "../engine/helpers/harness.js";

function input() {
  return {
    prompt: "hello",
    messages: [{ role: "user", content: "first" }] as ConversationMessage[],
    sessionId: "s1",
    platform: "slack",
    model: "m1",
    workspace: { root: "/w", context: "ctx" },
    requester: { userId: "U1", displayName: "Ann" },
    mode: "interactive" as const,
    allowedTools: ["read_file"],
    metadata: { channelContent: { channel: "#c", quote: "q" } },
  };
}

describe("ConversationExecutionRequest", () => {
  it("is a deep-frozen snapshot the caller's later mutations cannot reach", () => {
    const raw = input();
    const request = createRequest(raw);
    raw.messages.push({ role: "user", content: "later" });
    (raw.messages[0] as { content: string }).content = "changed";
    raw.allowedTools.push("run_command");
    raw.metadata.channelContent.quote = "changed";
    raw.workspace.root = "/elsewhere";
    expect(request.messages).toEqual([{ role: "user", content: "first" }]);
    expect(request.allowedTools).toEqual(["read_file"]);
    expect(request.metadata).toEqual({ channelContent: { channel: "#c", quote: "q" } });
    expect(request.workspace.root).toBe("/w");
    expect(isDeepFrozen(request)).toBe(true);
    expect(() => (request.messages as ConversationMessage[]).push({ role: "user", content: "x" })).toThrow();
  });

  it("shares a deep-frozen history instead of copying it, and copies a mutable one", () => {
    const history = deepFreeze([
      { role: "user", content: "first" },
      { role: "assistant", content: "second" },
    ] as ConversationMessage[]);
    const request = createRequest({ ...input(), messages: history });
    expect(request.messages).toBe(history);
    expect(withMessages(request, history).messages).toBe(history);
    const mutable: ConversationMessage[] = [history[0]!, { role: "user", content: "third" }];
    const next = withMessages(request, mutable);
    expect(next.messages).not.toBe(mutable);
    expect(next.messages[0]).toBe(history[0]);
    expect(next.messages[1]).not.toBe(mutable[1]);
    expect(isDeepFrozen(next)).toBe(true);
  });

  it("round-trips through toJSON / fromJSON (the JSON form is the frozen snapshot itself, never copied)", () => {
    const request = createRequest({ ...input(), turnId: "abc", maxSteps: 5 });
    expect(requestToJSON(request)).toBe(request);
    const json = JSON.parse(JSON.stringify(requestToJSON(request)));
    const back = requestFromJSON(json);
    expect(back).toEqual(request);
    expect(isDeepFrozen(back)).toBe(true);
    expect(() => requestFromJSON({ ...json, mode: "yolo" })).toThrow(/mode/);
  });

  it("has helpers that return new frozen snapshots", () => {
    const request = createRequest(input());
    expect(withMode(request, "plan").mode).toBe("plan");
    expect(request.mode).toBe("interactive");
    expect(withMessages(request, []).messages).toEqual([]);
    expect(allowsTool(request, "read_file")).toBe(true);
    expect(allowsTool(request, "update_plan")).toBe(true);
    expect(allowsTool(request, "run_command")).toBe(false);
    expect(effectiveMaxSteps(request)).toBe(30);
    expect(effectiveMaxSteps(createRequest({ ...input(), runToCompletion: true }))).toBe(
      RUN_TO_COMPLETION_MAX_STEPS,
    );
    expect(request.turnId).toMatch(/^[0-9a-f]{12}$/);
    expect(() => createRequest({ ...input(), maxSteps: 0 })).toThrow(RangeError);
  });
});
