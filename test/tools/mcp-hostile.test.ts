/**
 * MCP servers that attack the client: a tool list that never ends, an output schema whose
 * regular expression would freeze the event loop while a result is validated against it, and a
 * remote server whose answer is larger than memory.
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
import { McpManager } from "../../src/tools/mcp/mcp-manager.js";
import type { AnyTool } from "../../src/core/tool.js";
import { call } from "./support/tool-context.js";

const HOSTILE = fileURLToPath(new URL("../fixtures/mcp/hostile-server.mjs", import.meta.url));
const hostile = (mode: string): McpServerConfig =>
  ({
    transport: "stdio",
    command: process.execPath,
    args: [HOSTILE],
    env: { HOSTILE_MODE: mode },
  }) as McpServerConfig;

const managers: McpManager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((manager) => manager.close()));
});

function startManager(servers: Record<string, McpServerConfig>) {
  const notices: string[] = [];
  const manager = new McpManager({
    servers,
    onNotice: (message) => notices.push(message),
    timing: { restartInitialMs: 60_000, startTimeoutMs: 10_000 },
  });
  managers.push(manager);
  return { manager, notices };
}

describe("hostile MCP servers", () => {
  it("a tool list that pages forever fails the start instead of hanging it", async () => {
    const { manager, notices } = startManager({ evil: hostile("endless-list") });
    const started = await Promise.race([
      manager.start().then(() => "started"),
      new Promise((resolve) => setTimeout(() => resolve("still listing after 8 s"), 8000)),
    ]);
    expect(started).toBe("started");
    expect(manager.status()).toEqual({ evil: "down" });
    expect(notices[0]).toMatch(/^MCP server "evil" failed to start: .*pages/);
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
