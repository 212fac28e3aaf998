import { describe, expect, it } from "vitest";
import { deepFreeze } from "../../src/core/deep-freeze.js";
import type { ConversationMessage } from "../../src/core/messages.js";
import { buildOutbound } from "../../src/engine/outbound.js";

const at = { at: "2026-12-03T00:00:00.000Z" };

function conversation(): ConversationMessage[] {
  return [
    { role: "user", content: "list the files", meta: at },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "c1", type: "function", function: { name: "list_files", arguments: "{}" } }],
      meta: at,
    },
    { role: "tool", tool_call_id: "c1", content: "a.txt", meta: at },
    { role: "assistant", content: null, meta: { ...at, error: "The model timed out." } },
    { role: "assistant", content: "There is a.txt.", meta: at },
  ];
}

describe("buildOutbound", () => {
  it("sends the system prompt and the history without display fields or failed attempts, the context on the last user message", () => {
    expect(
      buildOutbound({ instructions: "sys", messages: conversation(), context: "mode: interactive" }),
    ).toEqual([
      { role: "system", content: "sys" },
      { role: "user", content: "list the files\n\n<context>\nmode: interactive\n</context>" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "list_files", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "c1", content: "a.txt" },
      { role: "assistant", content: "There is a.txt." },
    ]);
  });

  it("projects a stored (deep-frozen) message once and shares it between calls, never changing it", () => {
    const stored = deepFreeze(conversation());
    const first = buildOutbound({ instructions: "sys", messages: stored, context: "ctx" });
    const second = buildOutbound({ instructions: "sys", messages: stored, context: "other" });
    expect(second[2]).toBe(first[2]);
    expect(second[4]).toBe(first[4]);
    expect(Object.isFrozen(first[2])).toBe(true);
    // The context goes on a new user message each call; the shared projection keeps its text.
    expect(second[1]).toEqual({ role: "user", content: "list the files\n\n<context>\nother\n</context>" });
    expect(buildOutbound({ instructions: "", messages: stored })[0]).toEqual({
      role: "user",
      content: "list the files",
    });
  });

  it("projects a message that is not frozen afresh on every call", () => {
    const messages = conversation();
    const first = buildOutbound({ instructions: "", messages });
    (messages[4] as { content: string }).content = "Edited.";
    const second = buildOutbound({ instructions: "", messages });
    expect(second[3]).not.toBe(first[3]);
    expect(second[3]).toEqual({ role: "assistant", content: "Edited." });
  });
});
