import { describe, expect, it } from "vitest";
import { checkedToolResult, UNCHECKED_RESULT } from "../../src/tools/mcp/mcp-tool-result.js";

describe("the schema an MCP tool call is made with", () => {
  it("takes an answer of 200,000 keys as it is, without copying it key by key", () => {
    const answer: Record<string, unknown> = { content: [{ type: "text", text: "ok" }] };
    for (let n = 0; n < 200_000; n++) answer[`k${n}`] = 0;
    const taken = UNCHECKED_RESULT.safeParse(answer);
    // A loose object schema copied every key (0.6 s of the event loop, on top of the SDK's own
    // parse): the answer handed on is the very object parsed.
    expect(taken.success && taken.data).toBe(answer);
    expect(checkedToolResult(answer)).toEqual({ content: [{ type: "text", text: "ok" }] });
  });

  it("refuses an answer that is not an object, saying so", () => {
    for (const answer of [null, [], "text", 1]) {
      const taken = UNCHECKED_RESULT.safeParse(answer);
      expect(taken.success).toBe(false);
      expect(taken.error?.issues[0]?.message).toBe("the MCP server's answer is not an object");
    }
  });

  it("takes a missing content as none and refuses a content that is not a list", () => {
    expect(checkedToolResult({})).toEqual({ content: [] });
    expect(() => checkedToolResult({ content: "dumped" })).toThrow(
      "the MCP server's answer has a content that is not a list",
    );
    expect(checkedToolResult({ content: [], isError: true })).toEqual({ content: [], isError: true });
    expect(checkedToolResult({ content: [], isError: false })).toEqual({ content: [] });
  });
});
