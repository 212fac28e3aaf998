/**
 * McpManager: starts every configured MCP server, supervises them (failures are reported through
 * `onNotice` and the logger, and restarted with backoff — never thrown into the process) and
 * hands out their tools as agent tools.
 */
import path from "node:path";
import type { McpServerConfig } from "../../config/schema.js";
import type { AnyTool } from "../../core/tool.js";
import {
  type McpConnectionTiming,
  type McpLogger,
  McpServerConnection,
  type McpServerState,
} from "./mcp-server-connection.js";
import { mcpToolsOf } from "./mcp-tools.js";

/** Configuration of the manager. */
export interface McpManagerOptions {
  /** config tools.mcp_servers, by server name. */
  readonly servers: Readonly<Record<string, McpServerConfig>>;
  /** One-line reports for people (server failed, restarting, back again). */
  readonly onNotice?: (message: string) => void;
  readonly logger?: McpLogger;
  /**
   * Where stdio servers run: each in `<serversFolder>/<server name>`, made when it starts (default:
   * this process's working folder). A server runs on the host, outside the shell sandbox, and what
   * its working folder holds can decide what it runs (`npx` prefers a local node_modules, `python
   * -m` a local module, a relative command path resolves there) or above it (`npx` walks up to
   * every parent's node_modules/.bin, git to the repository): give a folder the agent cannot
   * write, outside the workspace (loadConfig refuses a data_dir inside it: mcp-server-folders.ts).
   */
  readonly serversFolder?: string;
  readonly timing?: Partial<McpConnectionTiming>;
  /** Cap of one tool result (default 30,000 characters). */
  readonly outputMaxChars?: number;
}

const DEFAULT_TIMING: McpConnectionTiming = {
  startTimeoutMs: 30_000,
  callTimeoutMs: 120_000,
  restartInitialMs: 1_000,
  restartMaxMs: 60_000,
  stableAfterMs: 60_000,
  streamReopenMinMs: 1_000,
  streamRetryInitialMs: 60_000,
  streamRetryMaxMs: 30 * 60_000,
};

/** Starts, supervises and exposes the configured MCP servers. */
export class McpManager {
  private readonly connections: McpServerConnection[];
  private readonly outputMaxChars: number | undefined;
  private readonly logger: McpLogger | undefined;
  /** How many tools the last `tools` call left out (a change is logged). */
  private leftOut = 0;

  /** Nothing starts until `start()`. */
  constructor(options: McpManagerOptions) {
    const timing = { ...DEFAULT_TIMING, ...options.timing };
    const notice = options.onNotice ?? (() => undefined);
    this.outputMaxChars = options.outputMaxChars;
    this.logger = options.logger;
    this.connections = Object.entries(options.servers).map(
      ([name, config]) =>
        new McpServerConnection(
          name,
          config,
          timing,
          notice,
          options.logger,
          options.serversFolder === undefined ? undefined : path.join(options.serversFolder, name),
        ),
    );
  }

  /** Start all servers in parallel; resolves when each has connected or failed once (never rejects). */
  async start(): Promise<void> {
    await Promise.all(this.connections.map((connection) => connection.start()));
  }

  /**
   * The agent tools of every server, from each server's latest tool listing (names unique), in
   * the servers' configured order: at most `room` of them (what one model request has left after
   * the other tools), the rest left out with a warning each time the number left out changes.
   */
  tools(room = Number.POSITIVE_INFINITY): AnyTool[] {
    const taken = new Set<string>();
    const all = this.connections.flatMap((connection) => mcpToolsOf(connection, taken, this.outputMaxChars));
    const left = Math.max(0, all.length - Math.max(0, room));
    if (left !== this.leftOut) {
      this.leftOut = left;
      if (left > 0)
        this.logger?.warn(
          { offered: all.length - left, leftOut: left },
          `MCP servers offer more tools than one model request may carry: ${left} of their ${all.length} tools are left out (those of the servers listed last)`,
        );
    }
    return left === 0 ? all : all.slice(0, all.length - left);
  }

  /** Each server's state (for status commands and health checks). */
  status(): Record<string, McpServerState> {
    return Object.fromEntries(this.connections.map((connection) => [connection.name, connection.state]));
  }

  /** Stop all servers and cancel pending restarts. */
  async close(): Promise<void> {
    await Promise.all(this.connections.map((connection) => connection.close()));
  }
}
