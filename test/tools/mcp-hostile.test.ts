/**
 * MCP servers that attack the client: a tool list that never ends (read until full, or of empty
 * pages) or ends late, page by page, an output schema whose regular expression would freeze the
 * event loop while a result is validated against it, a remote server whose answer is larger than memory, and stdio servers
 * that flood stdout (with no newline, or with one giant message) or stderr.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import type { McpServerConfig } from "../../src/config/schema.js";
import { cappedFetch, MCP_RESPONSE_MAX_BYTES } from "../../src/tools/mcp/capped-fetch.js";
import { CappedStdioClientTransport } from "../../src/tools/mcp/capped-stdio-transport.js";
import { McpManager } from "../../src/tools/mcp/mcp-manager.js";
import type { McpLogger } from "../../src/tools/mcp/mcp-server-connection.js";
import { McpMessageTooLargeError, StdioMessageBuffer } from "../../src/tools/mcp/stdio-message-buffer.js";
import type { AnyTool } from "../../src/core/tool.js";
import { call } from "./support/tool-context.js";

const HOSTILE = fileURLToPath(new URL("../fixtures/mcp/hostile-server.mjs", import.meta.url));
/** What the flooding modes write: 16 MB past the cap on one message. */
const FLOOD_BYTES = MCP_RESPONSE_MAX_BYTES + 16 * 1024 * 1024;
const hostile = (mode: string, floodBytes = FLOOD_BYTES): McpServerConfig =>
  ({
    transport: "stdio",
    command: process.execPath,
    args: [HOSTILE],
    env: { HOSTILE_MODE: mode, FLOOD_BYTES: String(floodBytes) },
  }) as McpServerConfig;

const managers: McpManager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((manager) => manager.close()));
});

function startManager(servers: Record<string, McpServerConfig>) {
  const notices: string[] = [];
  const logged: string[] = [];
  let noticed: () => void = () => undefined;
  const logger: McpLogger = {
    info: (_, message) => logged.push(message),
    warn: (_, message) => logged.push(message),
  };
  const manager = new McpManager({
    servers,
    onNotice: (message) => {
      notices.push(message);
      noticed();
    },
    logger,
    timing: { restartInitialMs: 60_000, startTimeoutMs: 10_000 },
  });
  managers.push(manager);
  const nextNotice = () =>
    new Promise<void>((resolve) => {
      noticed = resolve;
    });
  return { manager, notices, logged, nextNotice };
}

describe("hostile MCP servers", () => {
  it("a tool list that pages forever is read until it is full, its further pages not asked for", async () => {
    // Each page one more tool and a next one named: the start read 100 pages (each may be a 32 MB
    // message) and then failed; once 64 tools are kept nothing more could be, so no page past that is asked for.
    const { manager, notices, logged } = startManager({ evil: hostile("endless-list") });
    await manager.start();
    expect(manager.status()).toEqual({ evil: "ready" });
    expect(manager.tools().map((tool) => tool.name)).toEqual(
      Array.from({ length: 64 }, (_, page) => `evil__tool_${page}`),
    );
    expect(notices).toEqual([]);
    expect(logged).toContain(
      'MCP server "evil": the further pages of its list not asked for, the list being full',
    );
  });

  it("a tool list of empty pages that never ends fails the start instead of hanging it", async () => {
    const { manager, notices } = startManager({ evil: hostile("endless-empty-list") });
    const started = await Promise.race([
      manager.start().then(() => "started"),
      new Promise((resolve) => setTimeout(() => resolve("still listing after 8 s"), 8000)),
    ]);
    expect(started).toBe("started");
    expect(manager.status()).toEqual({ evil: "down" });
    expect(notices[0]).toMatch(/^MCP server "evil" failed to start: its tool list runs past 100 pages/);
  });

  it("a tool list answered page by page just within each request's timeout fails the start at its one deadline", async () => {
    // Each page took 0.2 s of a 1.5 s timeout: timed per request, the start went on for all 100
    // pages (20 s; 50 minutes with the default 30 s), the service's start waiting with it (64 pages
    // now, till the list is full: still 12.8 s).
    const slow = { ...hostile("slow-list"), env: { HOSTILE_MODE: "slow-list", PAGE_DELAY_MS: "200" } };
    const notices: string[] = [];
    const manager = new McpManager({
      servers: { evil: slow as McpServerConfig },
      onNotice: (message) => notices.push(message),
      timing: { restartInitialMs: 60_000, startTimeoutMs: 1_500 },
    });
    managers.push(manager);
    await manager.start();
    expect(manager.status()).toEqual({ evil: "down" });
    expect(notices[0]).toMatch(/^MCP server "evil" failed to start: its start took over 1\.5 s/);
  });

  it("a result is not run through the server's own output-schema regular expressions", async () => {
    const { manager } = startManager({ evil: hostile("regex-output") });
    await manager.start();
    const [match] = manager.tools();
    // A client that checked the result against the server's schema would refuse it (and, with a
    // longer string, freeze on the pattern first): unchecked, the text reaches the model.
    expect(await call(match as AnyTool, {})).toEqual({ ok: true, output: "matched" });
  });
});

describe("a tool result's content items", () => {
  it("are checked a bounded number at a time: 100,000 malformed ones cost neither seconds nor the heap", async () => {
    // 300 KB of `{}` items: checked whole by the SDK's schema, the answer held the event loop
    // about 6 s and took half a gigabyte of errors (4 MB of them took the process past its heap).
    const malformed = {
      ...hostile("malformed-items"),
      env: { HOSTILE_MODE: "malformed-items", ITEMS: "100000" },
    };
    const { manager } = startManager({ evil: malformed as McpServerConfig });
    await manager.start();
    const [dump] = manager.tools();
    const result = await call(dump as AnyTool, {});
    expect(result.ok).toBe(true);
    const lines = result.output.split("\n");
    expect(lines[0]).toBe("dumped");
    expect(lines.slice(1, 100)).toEqual(Array(99).fill("[a content item that is not an MCP content block]"));
    expect(lines[100]).toBe("[99901 more content items, not read: at most 100 are]");
    expect(lines).toHaveLength(101);
  });
});

describe("a tool list's entries", () => {
  it("are checked a bounded number at a time: 100,000 malformed ones after a tool cost neither seconds nor the start", async () => {
    // Checked whole by the SDK's schema, the list failed the start after about 7 s of the event
    // loop (a few megabytes of entries took the process past its heap, on every restart).
    const malformed = {
      ...hostile("malformed-tools"),
      env: { HOSTILE_MODE: "malformed-tools", ITEMS: "100000" },
    };
    const { manager, logged } = startManager({ evil: malformed as McpServerConfig });
    await manager.start();
    expect(manager.status()).toEqual({ evil: "ready" });
    expect(manager.tools().map((tool) => tool.name)).toEqual(["evil__dump"]);
    expect(logged).toContain(
      'MCP server "evil": 100000 of its 100001 tools not offered (98977 listed after the first 1024, not read; 1023 that are not MCP tools)',
    );
  });

  it("a next cursor that is not a string fails the start, as the SDK's check did, rather than ending the list", async () => {
    const { manager, notices } = startManager({ evil: hostile("number-cursor") });
    await manager.start();
    expect(manager.status()).toEqual({ evil: "down" });
    expect(notices[0]).toMatch(/^MCP server "evil" failed to start: .*nextCursor is not a string/);
  });
});

describe("a tool result's isError", () => {
  it("that is neither true nor false fails the call rather than reading as a success", async () => {
    const { manager } = startManager({ evil: hostile("string-error") });
    await manager.start();
    const [dump] = manager.tools();
    const result = await call(dump as AnyTool, {});
    expect(result.ok).toBe(false);
    expect(result.output).toContain("isError that is neither true nor false");
  });
});

/** Serves MCP over HTTP, answering every tools/call with a result of `resultBytes` characters. */
async function oversizedServer(resultBytes: number): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
    if (body?.method === "tools/call") {
      res.writeHead(200, { "content-type": "application/json" });
      res.write(
        `{"jsonrpc":"2.0","id":${JSON.stringify(body.id)},"result":{"content":[{"type":"text","text":"`,
      );
      const megabyte = "x".repeat(1024 * 1024);
      for (let sent = 0; sent < resultBytes && !res.destroyed; sent += megabyte.length) {
        if (!res.write(megabyte))
          await new Promise((resolve) => res.once("drain", resolve).once("close", resolve));
      }
      res.end(`"}]}}`);
      return;
    }
    const mcp = new Server({ name: "big", version: "1.0.0" }, { capabilities: { tools: {} } });
    mcp.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [{ name: "dump", inputSchema: { type: "object" } }],
    }));
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on("close", () => void transport.close());
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe("a remote MCP server's response size", () => {
  it("a result larger than the response cap fails that call instead of filling memory", async () => {
    // 40 MB of valid JSON: read whole, it became the tool's result (and a larger one took the process).
    const remote = await oversizedServer(MCP_RESPONSE_MAX_BYTES + 8 * 1024 * 1024);
    try {
      const { manager } = startManager({
        big: { transport: "http", url: remote.url, headers: {} } as McpServerConfig,
      });
      await manager.start();
      const [dump] = manager.tools();
      const result = await call(dump as AnyTool, {});
      expect(result.ok).toBe(false);
      expect(result).toEqual({
        ok: false,
        output: `dump on MCP server "big" failed: the MCP server's response is larger than 32.0 MB`,
      });
    } finally {
      await remote.close();
    }
  });

  it("a declared length over the cap is refused before the body is read", async () => {
    let cancelled = false;
    const body = new ReadableStream({
      cancel: () => {
        cancelled = true;
      },
    });
    const base = async () => new Response(body, { headers: { "content-length": "2000" } });
    await expect(cappedFetch(1000, base)("http://mcp.example/")).rejects.toThrow(/larger than 1000 B/);
    expect(cancelled).toBe(true);
    const small = await cappedFetch(1000, async () => new Response("ok"))("http://mcp.example/");
    expect(await small.text()).toBe("ok");
  });
});

describe("a stdio MCP server's output size", () => {
  const stopped = (name: string) =>
    `MCP server "${name}" sent a message over 32.0 MB and was stopped; restarting in 60 s.`;

  it("stdout without a newline is refused at the cap, stopping the server, never held past it", async () => {
    const transport = new CappedStdioClientTransport(
      {
        command: process.execPath,
        args: [HOSTILE],
        env: { HOSTILE_MODE: "flood", FLOOD_BYTES: String(FLOOD_BYTES) },
      },
      MCP_RESPONSE_MAX_BYTES,
    );
    // The transport reads through the capped buffer (the SDK's own kept the flood growing).
    // biome-ignore lint/complexity/useLiteralKeys: the SDK's private field; brackets reach it
    const buffer = transport["_readBuffer"];
    expect(buffer).toBeInstanceOf(StdioMessageBuffer);
    const append = buffer.append.bind(buffer);
    let received = 0;
    let mostHeld = 0;
    buffer.append = (chunk: Buffer) => {
      received += chunk.length;
      try {
        append(chunk);
      } finally {
        mostHeld = Math.max(mostHeld, buffer.held);
      }
    };
    const errors: Error[] = [];
    transport.onerror = (error) => errors.push(error);
    const closed = new Promise<void>((resolve) => {
      transport.onclose = resolve;
    });
    await transport.start();
    await closed;
    // All of the flood was read (the server wrote it all before it could exit), one refusal was
    // made, and at no point was more than the cap of it held.
    expect(received).toBe(FLOOD_BYTES);
    expect(errors).toEqual([new McpMessageTooLargeError(MCP_RESPONSE_MAX_BYTES)]);
    expect(mostHeld).toBeLessThanOrEqual(MCP_RESPONSE_MAX_BYTES);
    expect(buffer.held).toBe(0);
  });

  it("a server flooding stdout from the start fails to start with the reason", async () => {
    const { manager, notices, logged } = startManager({ flood: hostile("flood") });
    await manager.start();
    expect(manager.status()).toEqual({ flood: "down" });
    expect(notices).toEqual([stopped("flood")]);
    expect(logged).toEqual([stopped("flood")]);
  });

  it("one message over the cap after the handshake fails that call and stops the server", async () => {
    const { manager, notices, nextNotice } = startManager({ big: hostile("oversized-result") });
    await manager.start();
    expect(manager.status()).toEqual({ big: "ready" });
    const [dump] = manager.tools();
    const notice = nextNotice();
    const result = await call(dump as AnyTool, {});
    expect(result).toEqual({
      ok: false,
      output: expect.stringMatching(/^match on MCP server "big" failed: .*Connection closed/),
    });
    await notice;
    expect(notices).toEqual([stopped("big")]);
    expect(manager.status()).toEqual({ big: "down" });
  });

  it("stderr without a newline is logged as one cut line, however much is written", async () => {
    const { manager, notices, logged } = startManager({ noisy: hostile("stderr-flood", 4 * 1024 * 1024) });
    await manager.start();
    expect(logged.filter((line) => line.startsWith("MCP stderr:"))).toEqual([
      `MCP stderr: ${"x".repeat(500)}`,
      "MCP stderr: hostile: giving up",
    ]);
    expect(notices).toEqual([
      'MCP server "noisy" failed to start: MCP error -32000: Connection closed (stderr: hostile: giving up); restarting in 60 s.',
    ]);
  });

  it("many short stderr lines reach the log at a bounded rate; the failure still names the last", async () => {
    const { manager, notices, logged } = startManager({ chatty: hostile("stderr-lines") });
    await manager.start();
    const stderr = logged.filter((line) => line.startsWith("MCP stderr:"));
    // 5,001 lines were written: the first 20 pass at once, then 5 a second.
    expect(stderr.slice(0, 20)).toEqual(Array.from({ length: 20 }, (_, i) => `MCP stderr: noise ${i}`));
    expect(stderr.length).toBeLessThan(500);
    expect(notices).toEqual([
      'MCP server "chatty" failed to start: MCP error -32000: Connection closed (stderr: hostile: giving up); restarting in 60 s.',
    ]);
  });
});
