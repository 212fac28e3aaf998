/**
 * A tool call's answer from an MCP server, checked item by item. The SDK checks an answer against
 * its whole CallToolResult schema before handing it back, and a content item that is none of MCP's
 * content blocks costs that check about 0.1 ms and 5 KB of error (a union of five kinds, each
 * failing): a server answering with 50,000 items of `{}` (150 KB) held the event loop 3 s, and
 * 4 MB of them took the process past its heap. So the call is made with UNCHECKED_RESULT (any
 * object; tool listings are too, their entries checked by mcp-tool-bounds.ts) and the answer is
 * checked here: its first MAX_CONTENT_ITEMS items, each on its own, an
 * item that is not a content block named as such, the rest counted, never read. This file loads
 * the SDK: import it only when a server starts.
 */
import { type CallToolResult, ContentBlockSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

/**
 * The schema a tool call is made with: any object, taken as it is (not copied: a loose object
 * schema copied each key, 0.6 s for an answer of 200,000 keys), checked afterwards by
 * `checkedToolResult`.
 */
export const UNCHECKED_RESULT = z.custom<Record<string, unknown>>(
  (value) => typeof value === "object" && value !== null && !Array.isArray(value),
  { error: "the MCP server's answer is not an object" },
);

/** Content items of one answer that are read; far more than the model is shown of any (output-cap.ts). */
export const MAX_CONTENT_ITEMS = 100;

/**
 * `answer` as a CallToolResult: its first MAX_CONTENT_ITEMS content items, one that is not a content
 * block replaced by a line saying so, and a line counting those left unread; `structuredContent`
 * only when it is an object. Throws, as the SDK's check did, on an answer whose `content` is
 * there but no list or whose `isError` is there but neither true nor false (`"true"` must not
 * read as a success).
 */
export function checkedToolResult(answer: Record<string, unknown>): CallToolResult {
  const { content: listed = [], isError = false } = answer;
  if (!Array.isArray(listed)) throw new Error("the MCP server's answer has a content that is not a list");
  if (typeof isError !== "boolean")
    throw new Error("the MCP server's answer has an isError that is neither true nor false");
  const items: unknown[] = listed;
  const content: CallToolResult["content"] = items.slice(0, MAX_CONTENT_ITEMS).map((item) => {
    const block = ContentBlockSchema.safeParse(item);
    return block.success
      ? block.data
      : { type: "text", text: "[a content item that is not an MCP content block]" };
  });
  if (items.length > MAX_CONTENT_ITEMS)
    content.push({
      type: "text",
      text: `[${items.length - MAX_CONTENT_ITEMS} more content items, not read: at most ${MAX_CONTENT_ITEMS} are]`,
    });
  const structured = answer.structuredContent;
  return {
    content,
    ...(structured !== null && typeof structured === "object" && !Array.isArray(structured)
      ? { structuredContent: structured as Record<string, unknown> }
      : {}),
    ...(isError ? { isError: true } : {}),
  };
}
