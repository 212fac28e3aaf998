/**
 * MCP tools as agent tools: each server tool becomes `<server>__<tool>` (sanitised to the
 * characters model APIs accept), advertised with the server's own description after a label that
 * says whose it is (the label first: the model and the safety reviewer must read it before the
 * server's text, and the reviewer's view of a description is cut), and its own JSON Schema (the
 * connection keeps only what mcp-tool-bounds.ts allows: how many, description length, schema
 * shape and size). The category is the server's configured `risk`, else exec (so it asks). A
 * server's annotations are its own claims: readOnlyHint (→ read) and destructiveHint: false (→
 * medium risk) count only when its config says `trust_annotations: true`. Results are flattened to
 * text and capped; a down server or a failed call is a tool error.
 */
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { ToolCategory } from "../../core/events.js";
import { capOutput, DEFAULT_TOOL_OUTPUT_CHARS } from "../output-cap.js";
import { type AnyTool, compactArgs, defineTool, fail, ok, type ToolRisk } from "../../core/tool.js";
import type { McpServerConnection } from "./mcp-server-connection.js";

const MAX_TOOL_NAME = 64;

/** The agent-facing name of a server tool: `<server>__<tool>`, only [A-Za-z0-9_-], at most 64 chars. */
export function mcpToolName(server: string, tool: string): string {
  return `${server}__${tool}`.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, MAX_TOOL_NAME);
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

function uniqueName(name: string, taken: Set<string>): string {
  let candidate = name;
  for (let n = 2; taken.has(candidate); n += 1) candidate = `${name.slice(0, MAX_TOOL_NAME - 4)}_${n}`;
  taken.add(candidate);
  return candidate;
}

/**
 * Agent tools for the current tool list of one connection. `taken` holds names already used
 * (by other servers); a clash after sanitising gets a numeric suffix. Only two tools of one server
 * can clash (`a.b` and `a_b`): the configuration refuses server names that would let another
 * server's tools take this one's names, and their grants with them (mcpServerName).
 */
export function mcpToolsOf(
  connection: McpServerConnection,
  taken: Set<string> = new Set(),
  outputMaxChars = DEFAULT_TOOL_OUTPUT_CHARS,
): AnyTool[] {
  return connection.tools.map((tool) => {
    const { config } = connection;
    const { category, risk } = classifyMcpTool(tool, config.risk, config.trustAnnotations === true);
    const label = `MCP server "${connection.name}"`;
    return defineTool({
      name: uniqueName(mcpToolName(connection.name, tool.name), taken),
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
