/**
 * The tool set of each session: the built-in tools (file, shell, web; memory when a store is
 * wired; messaging only where the session's platform has a Messenger), the interactive tools, the
 * MCP servers' tools when configured, and extra tools other modules contribute (subscriptions).
 * Every non-interactive result is capped before it reaches the model. Which of these the model is
 * offered on a given turn is the registry's call: plan and discuss modes advertise only read and
 * interactive tools, and propose_plan only in plan mode.
 *
 * The built-in and interactive tools hold no session state (a call's context comes with the
 * call), so they are built once per Messenger and every session shares them. Built for every
 * session, they cost each new session ~39 µs and ~13 KB kept for as long as the session is cached
 * (a Slack DM's every top-level message is a new thread, so a new session); shared, ~7 µs and
 * ~1.6 KB.
 */
import { type BuiltinToolsOptions, createBuiltinTools, type FileToolLimits } from "../tools/builtin-tools.js";
import type { WorkspaceRootsOptions } from "../tools/files/workspace-paths.js";
import { interactiveTools } from "../tools/interactive-tools.js";
import type { MemoryToolsOptions } from "../tools/memory/memory-tools.js";
import type { Messenger } from "../tools/messaging/messenger.js";
import { capOutput } from "../tools/output-cap.js";
import { ToolRegistry } from "../tools/registry.js";
import { isBuiltInInteractive } from "../tools/trusted-category.js";
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
  /** At most `room` tools (the rest are left out, which the source reports). */
  tools(room: number): readonly AnyTool[];
}

/**
 * The most tools one model request carries: OpenAI refuses a request with more (the strictest of
 * the compatible servers), which would fail every turn. MCP servers get what the built-in,
 * interactive and module tools leave.
 */
export const MAX_TOOLS_PER_REQUEST = 128;

/** What the sessions' tool sets are built from. */
export interface ToolSetOptions {
  readonly workspace: WorkspaceRootsOptions;
  readonly limits?: ToolLimits;
  /** Memory tools are included only when given. */
  readonly memory?: MemoryToolsOptions;
  /** The Messenger of a platform; send_message / send_file only where there is one. */
  readonly messengerFor?: (platform: string) => Messenger | undefined;
  readonly mcp?: McpToolSource;
}

/**
 * The same tool with results longer than `maxChars` cut to head + tail. The built-in interactive
 * tools are returned unchanged (the engine answers them, and knows them by identity); another
 * tool claiming their category is capped like any.
 */
function withResultCap(tool: AnyTool, maxChars: number): AnyTool {
  if (isBuiltInInteractive(tool)) return tool;
  const execute: AnyTool["execute"] = async (args, context) => {
    const result = await tool.execute(args, context);
    return result.output.length > maxChars
      ? { ...result, output: capOutput(result.output, maxChars) }
      : result;
  };
  return Object.freeze({ ...tool, execute });
}

/**
 * Builds each session's tool registry. The tools every session with the same Messenger has are
 * built once: the Messenger is the only part of them that differs between platforms, and a
 * restarted channel registers a new one (its sessions from then on get tools sending through it).
 */
export class SessionToolSets {
  private readonly sharedByMessenger = new WeakMap<Messenger, readonly AnyTool[]>();
  private sharedWithoutMessenger: readonly AnyTool[] | undefined;
  /** Each MCP or extra tool with its results capped, made once per tool. */
  private readonly capped = new WeakMap<AnyTool, AnyTool>();

  constructor(private readonly options: ToolSetOptions) {}

  /**
   * A registry of a session on `platform`, in registration order: built-in, interactive, MCP
   * (listed now: servers come and go; as many as MAX_TOOLS_PER_REQUEST leaves room for), then
   * `extra`. Two tools with one name are a configuration error: it throws, naming the tool, rather
   * than silently dropping one.
   */
  registryFor(platform: string, extra: readonly AnyTool[] = []): ToolRegistry {
    const registry = new ToolRegistry();
    const shared = this.sharedWith(this.options.messengerFor?.(platform));
    const mcp = this.options.mcp?.tools(MAX_TOOLS_PER_REQUEST - shared.length - extra.length) ?? [];
    for (const tool of [...shared, ...mcp, ...extra]) registry.register(this.cap(tool));
    return registry;
  }

  /** The built-in and interactive tools, sending messages through `messenger` when there is one. */
  private sharedWith(messenger: Messenger | undefined): readonly AnyTool[] {
    const known = messenger ? this.sharedByMessenger.get(messenger) : this.sharedWithoutMessenger;
    if (known) return known;
    const { workspace, limits, memory } = this.options;
    const built = [
      ...createBuiltinTools({
        workspace,
        files: limits?.files,
        runCommand: limits?.runCommand,
        webFetch: limits?.webFetch,
        memory,
        messenger,
      }),
      ...interactiveTools,
    ];
    const tools = Object.freeze(built.map((tool) => this.cap(tool)));
    if (messenger) this.sharedByMessenger.set(messenger, tools);
    else this.sharedWithoutMessenger = tools;
    return tools;
  }

  private cap(tool: AnyTool): AnyTool {
    const maxChars = this.options.limits?.resultMaxChars;
    if (maxChars === undefined) return tool;
    let capped = this.capped.get(tool);
    if (!capped) {
      capped = withResultCap(tool, maxChars);
      this.capped.set(tool, capped);
    }
    return capped;
  }
}
