/**
 * The tool set of one session: the built-in tools (file, shell, web; memory when a store is wired;
 * messaging only where the session's platform has a Messenger), the interactive tools, the MCP
 * servers' tools when configured, and extra tools other modules contribute (subscriptions). Every
 * non-interactive result is capped before it reaches the model. Which of these the model is
 * offered on a given turn is the registry's call: plan and discuss modes advertise only read and
 * interactive tools, and propose_plan only in plan mode.
 */
import { type BuiltinToolsOptions, createBuiltinTools, type FileToolLimits } from "../tools/builtin-tools.js";
import type { WorkspaceRootsOptions } from "../tools/files/workspace-paths.js";
import { interactiveTools } from "../tools/interactive-tools.js";
import type { MemoryToolsOptions } from "../tools/memory/memory-tools.js";
import type { Messenger } from "../tools/messaging/messenger.js";
import { capOutput } from "../tools/output-cap.js";
import { ToolRegistry } from "../tools/registry.js";
import type { AnyTool } from "../core/tool.js";

/** The tool limits from config. */
export interface ToolLimits {
  readonly files?: FileToolLimits;
  readonly runCommand?: BuiltinToolsOptions["runCommand"];
  readonly webFetch?: BuiltinToolsOptions["webFetch"];
  /** Longer tool results reach the model cut to head + tail with a marker (agent.tool_result_max_chars). */
  readonly resultMaxChars?: number;
}

/** Anything that lists MCP tools (McpManager); read when a session starts. */
export interface McpToolSource {
  tools(): readonly AnyTool[];
}

/** What one session's tool set is built from. */
export interface ToolSetOptions {
  readonly workspace: WorkspaceRootsOptions;
  readonly limits?: ToolLimits;
  /** Memory tools are included only when given. */
  readonly memory?: MemoryToolsOptions;
  /** The Messenger of the session's platform; send_message / send_file only when there is one. */
  readonly messenger?: Messenger;
  readonly mcp?: McpToolSource;
  /** Tools other modules add (e.g. subscriptions), registered last. */
  readonly extra?: readonly AnyTool[];
}

/**
 * The same tool with results longer than `maxChars` cut to head + tail. Interactive tools are
 * returned unchanged (the engine answers them itself).
 */
export function withResultCap(tool: AnyTool, maxChars: number): AnyTool {
  if (tool.category === "interactive") return tool;
  const execute: AnyTool["execute"] = async (args, context) => {
    const result = await tool.execute(args, context);
    return result.output.length > maxChars
      ? { ...result, output: capOutput(result.output, maxChars) }
      : result;
  };
  return Object.freeze({ ...tool, execute });
}

/** The session's tools in registration order: built-in, interactive, MCP, extra. */
export function sessionTools(options: ToolSetOptions): AnyTool[] {
  const tools: AnyTool[] = [
    ...createBuiltinTools({
      workspace: options.workspace,
      files: options.limits?.files,
      runCommand: options.limits?.runCommand,
      webFetch: options.limits?.webFetch,
      memory: options.memory,
      messenger: options.messenger,
    }),
    ...interactiveTools,
    ...(options.mcp?.tools() ?? []),
    ...(options.extra ?? []),
  ];
  const cap = options.limits?.resultMaxChars;
  return cap === undefined ? tools : tools.map((tool) => withResultCap(tool, cap));
}

/**
 * A registry holding `tools`. Two tools with one name are a configuration error: it throws,
 * naming the tool, rather than silently dropping one.
 */
export function registryOf(tools: readonly AnyTool[]): ToolRegistry {
  const registry = new ToolRegistry();
  for (const tool of tools) registry.register(tool);
  return registry;
}
