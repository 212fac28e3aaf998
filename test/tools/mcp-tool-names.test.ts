/**
 * An MCP tool's agent-facing name keys its "always allow" grants, so it must name the same server
 * tool whatever order the server lists its tools in: a name sanitising or truncation changed ends
 * in a hash of the server-side name, and tools still sharing a name are left out, never numbered.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import type { McpServerConnection } from "../../src/tools/mcp/mcp-server-connection.js";
import { mcpToolName, mcpToolsOf } from "../../src/tools/mcp/mcp-tools.js";

const schema = { type: "object" as const, properties: {} };
const tool = (name: string): Tool => ({ name, description: name, inputSchema: schema });

/** A connection as mcpToolsOf reads it: a name, a config and a tool list. */
function connection(tools: Tool[]): McpServerConnection {
  return {
    name: "github",
    config: { transport: "http", url: "https://mcp.example/", headers: {} },
    tools,
  } as unknown as McpServerConnection;
}

/** Agent-facing name by server-side name, for the tools listed in this order. */
function names(tools: Tool[]): Record<string, string> {
  return Object.fromEntries(
    mcpToolsOf(connection(tools)).map((agentTool) => [
      agentTool.description.match(/tool "([^"]+)"/)![1]!,
      agentTool.name,
    ]),
  );
}

describe("MCP agent-facing tool names", () => {
  it("keeps a name that needs no change as it is", () => {
    expect(mcpToolName("github", "search_issues")).toBe("github__search_issues");
  });

  it("gives two tools sanitising to one name different names, the same in either order", () => {
    const dotted = tool("files.read");
    const underscored = tool("files_read");
    const first = names([dotted, underscored]);
    const later = names([underscored, dotted]);
    expect(first).toEqual(later);
    expect(first[underscored.name]).toBe("github__files_read");
    expect(first[dotted.name]).toMatch(/^github__files_read_[0-9a-f]{6}$/);
  });

  it("tells long names apart by their hash within 64 characters, in either order", () => {
    const prefix = "repository_pull_request_review_comment_thread_attachments_of_";
    const list = tool(`${prefix}list`);
    const wipe = tool(`${prefix}delete_all`);
    const first = names([list, wipe]);
    const later = names([wipe, list]);
    expect(first).toEqual(later);
    expect(first[list.name]).not.toBe(first[wipe.name]);
    for (const name of Object.values(first)) expect(name.length).toBeLessThanOrEqual(64);
  });

  it("leaves out every tool of a name still shared, whichever is listed first", () => {
    const dotted = tool("files.read");
    const hashed = mcpToolName("github", dotted.name).slice("github__".length);
    const twin = tool(hashed);
    const other = tool("list");
    expect(names([dotted, twin, other])).toEqual({ list: "github__list" });
    expect(names([twin, other, dotted])).toEqual({ list: "github__list" });
  });
});
