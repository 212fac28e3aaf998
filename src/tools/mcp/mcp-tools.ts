/**
 * MCP tools as agent tools: each server tool becomes `<server>__<tool>` (sanitised to the
 * characters model APIs accept, at most 64 of them), advertised with the server's own description
 * after a label that says whose it is (the label first: the model and the safety reviewer must
 * read it before the server's text, and the reviewer's view of a description is cut), and its own
 * JSON Schema (the connection keeps only what mcp-tool-bounds.ts allows: how many, description
 * length, schema shape and size). The category is the server's configured `risk`, else exec (so it
 * asks). A server's annotations are its own claims: readOnlyHint (→ read) and destructiveHint:
 * false (→ medium risk) count only when its config says `trust_annotations: true`. Results are
 * flattened to text and capped; a down server or a failed call is a tool error.
 *
 * The agent-facing name is the key of an "always allow" grant, so it is a function of the server
 * and the tool's own name alone, never of where the tool stands in the server's listing (a
 * restart may list the tools in another order, and a grant must not move to another tool): a name
 * that sanitising or the length limit changed ends in a short hash of the tool's server-side name,
 * which keeps `a.b` and `a_b`, or two long names sharing their first characters, apart. Tools of
 * one server that still share a name (only a tool named after another's hashed name can) are all
 * left out, whatever the order.
 */
import { createHash } from "node:crypto";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { ToolCategory } from "../../core/events.js";
import { capOutput, DEFAULT_TOOL_OUTPUT_CHARS } from "../output-cap.js";
import { type AnyTool, compactArgs, defineTool, fail, ok, type ToolRisk } from "../../core/tool.js";
import type { McpServerConnection } from "./mcp-server-connection.js";

const MAX_TOOL_NAME = 64;
/** Hex digits of the hash of a tool's server-side name that end a changed name. */
const NAME_HASH_CHARS = 6;

/**
 * The agent-facing name of a server tool: `<server>__<tool>`, only [A-Za-z0-9_-], at most 64
 * chars; when sanitising or the length limit changed it, cut to leave room for `_` and six hex
 * digits of the SHA-256 of the tool's server-side name, so it depends on nothing but the two names.
 */
export function mcpToolName(server: string, tool: string): string {
  const plain = `${server}__${tool}`;
  const safe = plain.replace(/[^A-Za-z0-9_-]/g, "_");
  if (safe === plain && safe.length <= MAX_TOOL_NAME) return safe;
  const hash = createHash("sha256").update(tool).digest("hex").slice(0, NAME_HASH_CHARS);
  return `${safe.slice(0, MAX_TOOL_NAME - NAME_HASH_CHARS - 1)}_${hash}`;
}

/** Category and risk of a server tool; its annotations count only when `trustAnnotations`. */
export function classifyMcpTool(
  tool: Tool,
  configured: ToolCategory | undefined,
  trustAnnotations = false,
): { category: ToolCategory; risk: ToolRisk } {
  const hints = trustAnnotations ? tool.annotations : undefined;
  if (hints?.readOnlyHint === true) return { category: "read", risk: "low" };
  const category = configured ?? "exec";
  const risk: ToolRisk = hints?.destructiveHint === false ? "medium" : "high";
  return { category, risk: category === "read" ? "low" : risk };
}

/** Flatten an MCP tool result to text for the model. */
export function formatMcpResult(result: CallToolResult): string {
  const parts = result.content.map((item) => {
    switch (item.type) {
      case "text":
        return item.text;
      case "image":
      case "audio":
        return `[${item.type} ${item.mimeType}, ${Buffer.byteLength(item.data, "base64")} bytes]`;
      case "resource":
        return "text" in item.resource ? item.resource.text : `[resource ${item.resource.uri}]`;
      case "resource_link":
        return `[resource ${item.uri}${item.name ? ` (${item.name})` : ""}]`;
      default:
        return `[${(item as { type: string }).type} content]`;
    }
  });
  if (parts.length === 0 && result.structuredContent !== undefined)
    return JSON.stringify(result.structuredContent, null, 2);
  return parts.join("\n") || "(no output)";
}

/**
 * The server's tools with their agent-facing names, leaving out every tool whose name another of
 * them shares (whichever is listed first) or that `taken` already holds; the names kept join `taken`.
 */
function namedTools(connection: McpServerConnection, taken: Set<string>): { tool: Tool; name: string }[] {
  const named = connection.tools.map((tool) => ({ tool, name: mcpToolName(connection.name, tool.name) }));
  const counts = new Map<string, number>();
  for (const { name } of named) counts.set(name, (counts.get(name) ?? 0) + 1);
  const kept = named.filter(({ name }) => counts.get(name) === 1 && !taken.has(name));
  for (const { name } of kept) taken.add(name);
  return kept;
}

/**
 * Agent tools for the current tool list of one connection. `taken` holds names already used (by
 * other servers), which the configuration keeps out of this server's reach (mcpServerName); tools
 * sharing a name are left out, never told apart by their order (see the module header).
 */
export function mcpToolsOf(
  connection: McpServerConnection,
  taken: Set<string> = new Set(),
  outputMaxChars = DEFAULT_TOOL_OUTPUT_CHARS,
): AnyTool[] {
  return namedTools(connection, taken).map(({ tool, name }) => {
    const { config } = connection;
    const { category, risk } = classifyMcpTool(tool, config.risk, config.trustAnnotations === true);
    const label = `MCP server "${connection.name}"`;
    return defineTool({
      name,
      description: `[${label}, tool "${tool.name}", described by the server] ${tool.description ?? tool.title ?? tool.name}`,
      inputSchema: z.looseObject({}),
      jsonSchema: { ...tool.inputSchema, type: "object" },
      category,
      risk,
      concurrent: category === "read",
      // What a server answers is its data, not the person's words.
      readsOutside: true,
      label: (args) => compactArgs(args),
      async execute(args, context) {
        try {
          const result = await connection.callTool(tool.name, args, context.signal);
          const text = capOutput(formatMcpResult(result), outputMaxChars);
          return result.isError ? fail(text) : ok(text);
        } catch (error) {
          if (context.signal.aborted) return fail(`the call to ${tool.name} on ${label} was interrupted`);
          return fail(
            `${tool.name} on ${label} failed: ${error instanceof Error ? error.message : String(error)}`,
          );
        }
      },
      async preview(args) {
        return {
          summary: `Call ${tool.name} on ${label}`,
          detail: { kind: "code", text: JSON.stringify(args, null, 2) },
        };
      },
    });
  });
}
