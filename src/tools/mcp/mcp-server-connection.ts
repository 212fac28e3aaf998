/**
 * One MCP server connection: starts the server (stdio child process with a clean environment, or
 * streamable HTTP), lists its tools, and keeps it alive — a server that fails to start or stops
 * is reported (notice + log line) and restarted with exponential backoff. Calls while it is down
 * fail fast with McpUnavailableError; nothing here ever throws into the process. The MCP SDK is
 * imported when the first server starts, so a configuration without MCP servers never loads it.
 * A server is not trusted: its tool list may take at most MAX_TOOL_PAGES pages, none asked for
 * once the list is full, and what of it is kept and offered to the model is bounded
 * (mcp-tool-bounds.ts, dropped tools logged); each of its
 * messages at most MCP_RESPONSE_MAX_BYTES (a remote one's call then fails, capped-fetch.ts; a
 * stdio one is stopped and restarted, capped-stdio-transport.ts), a remote one's event streams
 * are reopened at a bounded pace: its standing stream is given up for a growing cool-down and then
 * listened to again (each said once) and a call it resumes too often fails, while the server and
 * its other calls go on (event-stream-pace.ts),
 * its stderr reaches the log a bounded line at a time (stderr-lines.ts), and results are not
 * validated against its output schemas (their `pattern`s would run on the event loop, where one
 * that backtracks freezes every chat; results only ever reach the model as text), nor whole
 * against the SDK's schema: a bounded number of their items is checked (mcp-tool-result.ts).
 */
import { mkdir } from "node:fs/promises";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/index.js";
import type { McpServerConfig } from "../../config/schema.js";
import { formatBytes } from "../../core/attachment.js";
import { backoffMs } from "../../core/backoff.js";
import { type Clock, systemClock, type TimerHandle } from "../../core/clock.js";
import { formatDuration } from "../../core/duration-text.js";
import { cleanEnv } from "../shell/clean-env.js";
import { cappedFetch, MCP_RESPONSE_MAX_BYTES } from "./capped-fetch.js";
import { EventStreamPace, STREAM_OPENS_PER_MINUTE } from "./event-stream-pace.js";
import { LogAllowance } from "./log-allowance.js";
import { BoundedToolList } from "./mcp-tool-bounds.js";
import { readStderrLines } from "./stderr-lines.js";
import { McpMessageTooLargeError } from "./stdio-message-buffer.js";

/** What the connection reports through; pino's Logger fits. */
export interface McpLogger {
  info(object: Record<string, unknown>, message: string): void;
  warn(object: Record<string, unknown>, message: string): void;
}

export type McpServerState = "starting" | "ready" | "down" | "closed";

/** Timing of one connection. */
export interface McpConnectionTiming {
  /** Connect + initialize + list tools, all pages together (default 30 s). */
  readonly startTimeoutMs: number;
  /** One tool call (default 120 s). */
  readonly callTimeoutMs: number;
  /** First restart delay, doubled per failed attempt (default 1 s) … */
  readonly restartInitialMs: number;
  /** … up to this (default 60 s). */
  readonly restartMaxMs: number;
  /** A server that ran this long before stopping restarts from the initial delay again (default 60 s). */
  readonly stableAfterMs: number;
  /** Least time between two opens of a remote server's standing event stream, or two resumes of one call (default 1 s). */
  readonly streamReopenMinMs: number;
  /** First cool-down of a standing event stream given up for reopening too often, doubled per give-up (default 1 min) … */
  readonly streamRetryInitialMs: number;
  /** … up to this (default 30 min). */
  readonly streamRetryMaxMs: number;
}

/** Thrown by `callTool` while the server is not connected. */
export class McpUnavailableError extends Error {
  override readonly name = "McpUnavailableError";
}

const STDERR_LINES_KEPT = 40;
/** Characters of one stderr line that are logged and kept. */
const STDERR_LINE_MAX_CHARS = 500;
/** Pages of tools/list followed before a server is refused (one that pages forever never starts). */
const MAX_TOOL_PAGES = 100;

/** Accepts any structured output unchecked (see the module header). */
const unvalidatedOutput: jsonSchemaValidator = {
  getValidator: () => (input) => ({ valid: true, data: input as never, errorMessage: undefined }),
};

/** A supervised connection to one configured MCP server. */
export class McpServerConnection {
  private stateValue: McpServerState = "starting";
  private client: Client | undefined;
  /** The pace of the current client's event streams (used by a remote server's transport). */
  private streams: EventStreamPace | undefined;
  private toolList: readonly Tool[] = [];
  private attempt = 0;
  private readySince = 0;
  private timer: TimerHandle | undefined;
  private readonly stderrTail: string[] = [];
  /** What the server makes us log passes at a bounded rate (log-allowance.ts). */
  private readonly logAllowance = new LogAllowance();
  /** Why the current server was stopped by this side, when it was (it overran the message cap). */
  private stopReason: string | undefined;

  /**
   * `notice` gets one-line, user-facing reports; a stdio server starts in `workFolder` (made
   * when missing), or in this process's working folder without one. Restarts and the event
   * streams' pace run on `clock`.
   */
  constructor(
    readonly name: string,
    readonly config: McpServerConfig,
    private readonly timing: McpConnectionTiming,
    private readonly notice: (message: string) => void,
    private readonly logger: McpLogger | undefined,
    private readonly workFolder: string | undefined,
    private readonly clock: Clock = systemClock,
  ) {}

  /** Current state. */
  get state(): McpServerState {
    return this.stateValue;
  }

  /** The tools from the latest successful listing (kept while the server restarts). */
  get tools(): readonly Tool[] {
    return this.toolList;
  }

  private get closed(): boolean {
    return this.stateValue === "closed";
  }

  /** Connect once; on failure a restart is scheduled. Resolves either way. */
  async start(): Promise<void> {
    if (this.closed) return;
    this.stateValue = "starting";
    this.stderrTail.length = 0;
    this.stopReason = undefined;
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const { ToolSchema } = await import("@modelcontextprotocol/sdk/types.js");
    const { UNCHECKED_RESULT } = await import("./mcp-tool-result.js");
    if (this.closed) return;
    const client = new Client(
      { name: "coworker", version: "0.1.0" },
      { capabilities: {}, jsonSchemaValidator: unvalidatedOutput },
    );
    this.client = client;
    this.streams?.stop();
    const streams = new EventStreamPace(
      {
        minGapMs: this.timing.streamReopenMinMs,
        retryInitialMs: this.timing.streamRetryInitialMs,
        retryMaxMs: this.timing.streamRetryMaxMs,
      },
      {
        givenUp: (retryInMs) => this.standingGivenUp(client, retryInMs),
        back: () => this.standingBack(client),
      },
      this.clock,
    );
    this.streams = streams;
    // One deadline for the whole start: each request's own timeout would let a server answering
    // every page of its tool list just in time hold the start (and the service's) for 100 of them.
    const startTime = new AbortController();
    const startTimer = this.clock.setTimer(
      () => startTime.abort(new Error(`its start took over ${formatDuration(this.timing.startTimeoutMs)}`)),
      this.timing.startTimeoutMs,
    );
    const startOptions = { signal: startTime.signal, timeout: this.timing.startTimeoutMs };
    try {
      const transport = await this.createTransport(streams);
      client.onclose = () => this.handleClose(client);
      client.onerror = (error) => {
        if (!(error instanceof McpMessageTooLargeError)) {
          this.logFromServer("warn", { err: error }, "MCP transport error");
        } else if (this.client === client) {
          this.stopReason = `sent a message over ${formatBytes(error.maxBytes)} and was stopped`;
        }
      };
      await client.connect(transport, startOptions);
      const listing = new BoundedToolList();
      let cursor: string | undefined;
      let pages = 0;
      do {
        pages += 1;
        if (pages > MAX_TOOL_PAGES) throw new Error(`its tool list runs past ${MAX_TOOL_PAGES} pages`);
        // Not client.listTools: the SDK's schema checks every entry (mcp-tool-bounds.ts checks a bounded number).
        const list = { method: "tools/list", params: cursor ? { cursor } : {} } as const;
        const page = await client.request(list, UNCHECKED_RESULT, startOptions);
        if (!Array.isArray(page.tools)) throw new Error("its tool list is not a list");
        listing.add(page.tools, (entry) => {
          const tool = ToolSchema.safeParse(entry);
          return tool.success ? tool.data : undefined;
        });
        const { nextCursor } = page;
        if (nextCursor !== undefined && typeof nextCursor !== "string")
          throw new Error("its tool list's nextCursor is not a string");
        cursor = nextCursor;
        // Nothing on a further page could be kept: it is not asked for (mcp-tool-bounds.ts).
        if (cursor && listing.full) {
          listing.leaveFurtherPages();
          cursor = undefined;
        }
      } while (cursor);
      if (this.client !== client || this.closed) return;
      const wasRestart = this.attempt > 0;
      const { tools } = listing;
      this.toolList = tools;
      const bounded = listing.report();
      if (bounded)
        this.logger?.warn(
          { server: this.name, ...bounded.fields },
          `MCP server "${this.name}": ${bounded.message}`,
        );
      this.stateValue = "ready";
      this.readySince = this.clock.now();
      this.logger?.info({ server: this.name, tools: tools.length }, "MCP server ready");
      if (wasRestart) this.notice(`MCP server "${this.name}" is running again (${tools.length} tools).`);
    } catch (error) {
      if (this.client !== client || this.closed) return;
      this.client = undefined;
      client.onclose = undefined;
      streams.stop();
      await client.close().catch(() => undefined);
      // The SDK words an aborted request as its own error: the deadline's reason says it better.
      const cause = startTime.signal.aborted ? startTime.signal.reason : error;
      this.scheduleRestart(this.stopReason ?? `failed to start: ${this.describe(cause)}`);
    } finally {
      this.clock.clearTimer(startTimer);
    }
  }

  /** A remote server's transport opens its event streams at the pace of `streams`, which may reopen its standing one. */
  private async createTransport(streams: EventStreamPace): Promise<Transport> {
    if (this.config.transport === "http") {
      const { StreamableHTTPClientTransport } = await import(
        "@modelcontextprotocol/sdk/client/streamableHttp.js"
      );
      const transport = new StreamableHTTPClientTransport(new URL(this.config.url), {
        requestInit: { headers: { ...this.config.headers } },
        fetch: streams.fetch(cappedFetch(MCP_RESPONSE_MAX_BYTES)),
      });
      // The SDK sends Last-Event-ID only for a non-empty id: "" opens the stream afresh.
      streams.reopenWith((lastEventId) => transport.resumeStream(lastEventId));
      return transport;
    }
    const { CappedStdioClientTransport } = await import("./capped-stdio-transport.js");
    if (this.workFolder) await mkdir(this.workFolder, { recursive: true, mode: 0o700 });
    const transport = new CappedStdioClientTransport(
      {
        command: this.config.command,
        args: [...this.config.args],
        env: cleanEnv(this.config.env),
        stderr: "pipe",
        ...(this.workFolder ? { cwd: this.workFolder } : {}),
      },
      MCP_RESPONSE_MAX_BYTES,
    );
    if (transport.stderr) {
      readStderrLines(transport.stderr, STDERR_LINE_MAX_CHARS, (line) => {
        this.stderrTail.push(line);
        if (this.stderrTail.length > STDERR_LINES_KEPT) this.stderrTail.shift();
        this.logFromServer("info", {}, `MCP stderr: ${line}`);
      });
    }
    return transport;
  }

  /** Log a line the server caused, within its allowance; the first after a gap says how many were left out. */
  private logFromServer(level: "info" | "warn", fields: Record<string, unknown>, message: string): void {
    const { pass, notLogged } = this.logAllowance.take();
    if (!pass) return;
    this.logger?.[level]({ server: this.name, ...fields, ...(notLogged > 0 ? { notLogged } : {}) }, message);
  }

  /** The most telling recent stderr line: a thrown error's message, else an error-like line, else the last. */
  private stderrHint(): string | undefined {
    const lines = this.stderrTail.filter((line) => !/^\s+at /.test(line));
    const thrown = lines.filter((line) => /^\s*[\w.]*(Error|Exception)\b/.test(line));
    const errorLike = lines.filter((line) => /error|exception|fatal|cannot|not found|denied/i.test(line));
    return thrown.at(-1) ?? errorLike.at(-1) ?? lines.at(-1);
  }

  private describe(error: unknown): string {
    const message = error instanceof Error ? error.message : String(error);
    const hint = this.stderrHint();
    return hint ? `${message} (stderr: ${hint.trim()})` : message;
  }

  /**
   * A remote server's standing event stream was reopened too often and is given up for a
   * cool-down (event-stream-pace.ts): said once. Its calls go on over POST, so it is not stopped.
   */
  private standingGivenUp(client: Client, retryInMs: number): void {
    if (this.client !== client) return;
    const message = `MCP server "${this.name}" reopens its event stream too often (over ${STREAM_OPENS_PER_MINUTE} times a minute), so it is not listened to between calls for ${formatDuration(retryInMs)}; its tools still work.`;
    this.logger?.warn({ server: this.name, retryInMs }, message);
    this.notice(message);
  }

  /** The given-up stream was opened again after its cool-down: said once. */
  private standingBack(client: Client): void {
    if (this.client !== client) return;
    const message = `MCP server "${this.name}" is listened to between calls again.`;
    this.logger?.info({ server: this.name }, message);
    this.notice(message);
  }

  private handleClose(client: Client): void {
    if (this.client !== client || this.stateValue === "closed" || this.stateValue === "starting") return;
    this.client = undefined;
    this.streams?.stop();
    if (this.clock.now() - this.readySince >= this.timing.stableAfterMs) this.attempt = 0;
    const hint = this.stderrHint();
    this.scheduleRestart(this.stopReason ?? `stopped unexpectedly${hint ? ` (stderr: ${hint.trim()})` : ""}`);
  }

  private scheduleRestart(why: string): void {
    this.stateValue = "down";
    const delay = backoffMs(this.attempt, this.timing.restartInitialMs, this.timing.restartMaxMs);
    this.attempt += 1;
    const message = `MCP server "${this.name}" ${why}; restarting in ${Math.round(delay / 100) / 10} s.`;
    this.logger?.warn({ server: this.name, attempt: this.attempt, delayMs: delay }, message);
    this.notice(message);
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = this.clock.setTimer(() => void this.start(), delay);
  }

  /** Call a tool by its server-side name; throws McpUnavailableError while the server is down. */
  async callTool(
    toolName: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<CallToolResult> {
    const client = this.client;
    const streams = this.streams;
    if (this.stateValue !== "ready" || !client || !streams) {
      throw new McpUnavailableError(
        `MCP server "${this.name}" is not available right now (${this.stateValue}); it is being restarted, try again later`,
      );
    }
    // A call whose answer the server makes us resume too often is failed alone (event-stream-pace.ts).
    const stop = new AbortController();
    let stopped: string | undefined;
    const followed = streams.follow((why) => {
      stopped ??= `MCP server "${this.name}" ${why}; the call to ${toolName} was stopped`;
      stop.abort(stopped);
    });
    try {
      const { checkedToolResult, UNCHECKED_RESULT } = await import("./mcp-tool-result.js");
      // Not client.callTool: it takes only the SDK's result schema, which checks every item.
      const call = { method: "tools/call", params: { name: toolName, arguments: args } } as const;
      const answer = await client.request(call, UNCHECKED_RESULT, {
        signal: AbortSignal.any([signal, stop.signal]),
        timeout: this.timing.callTimeoutMs,
        onresumptiontoken: followed.onresumptiontoken,
      });
      return checkedToolResult(answer);
    } catch (error) {
      if (stopped === undefined) throw error;
      this.logFromServer("warn", { tool: toolName }, stopped);
      throw new Error(stopped);
    } finally {
      followed.end();
    }
  }

  /** Stop for good: cancel restarts and close the connection (the stdio child is terminated). */
  async close(): Promise<void> {
    this.stateValue = "closed";
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.streams?.stop();
    const client = this.client;
    this.client = undefined;
    await client?.close().catch(() => undefined);
  }
}
