import { mkdtemp, readFile, realpath, rm } from "node:fs/promises";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import type { McpServerConfig } from "../../src/config/schema.js";
import { McpManager } from "../../src/tools/mcp/mcp-manager.js";
import { classifyMcpTool, formatMcpResult, mcpToolName } from "../../src/tools/mcp/mcp-tools.js";
import type { AnyTool } from "../../src/core/tool.js";
import { call, makeContext } from "./support/tool-context.js";

const FIXTURE = fileURLToPath(new URL("../fixtures/mcp/test-server.mjs", import.meta.url));
const stdio = (args: string[] = [FIXTURE], extra: Partial<McpServerConfig> = {}): McpServerConfig =>
  ({ transport: "stdio", command: process.execPath, args, env: {}, ...extra }) as McpServerConfig;

const managers: McpManager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((manager) => manager.close()));
});

/** A manager whose notices can be awaited. */
function startManager(
  servers: Record<string, McpServerConfig>,
  restartInitialMs = 50,
  serversFolder?: string,
) {
  const notices: string[] = [];
  const waiters: Array<{ pattern: RegExp; resolve: (message: string) => void }> = [];
  const manager = new McpManager({
    servers,
    onNotice: (message) => {
      notices.push(message);
      for (const waiter of waiters.filter((w) => w.pattern.test(message))) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(message);
      }
    },
    timing: { restartInitialMs, restartMaxMs: 400, startTimeoutMs: 10_000 },
    ...(serversFolder === undefined ? {} : { serversFolder }),
  });
  managers.push(manager);
  const nextNotice = (pattern: RegExp) =>
    new Promise<string>((resolve) => waiters.push({ pattern, resolve }));
  return { manager, notices, nextNotice };
}

function byName(tools: AnyTool[], name: string): AnyTool {
  const tool = tools.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name} in ${tools.map((t) => t.name).join(", ")}`);
  return tool;
}

describe("where stdio servers run", () => {
  it("each in a folder of its own under the servers folder, made when missing", async () => {
    const root = await mkdtemp(join(tmpdir(), "mcp-servers-"));
    try {
      const folder = join(root, "servers");
      const wrote = (name: string) => join(root, `${name}.cwd`);
      const { manager } = startManager(
        {
          one: stdio([FIXTURE], { env: { FIXTURE_CWD_FILE: wrote("one") } }),
          two: stdio([FIXTURE], { env: { FIXTURE_CWD_FILE: wrote("two") } }),
        },
        50,
        folder,
      );
      await manager.start();
      expect(manager.status()).toEqual({ one: "ready", two: "ready" });
      // The server reports its working folder with links resolved (macOS: /var is /private/var).
      expect(await readFile(wrote("one"), "utf8")).toBe(await realpath(join(folder, "one")));
      expect(await readFile(wrote("two"), "utf8")).toBe(await realpath(join(folder, "two")));
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe("MCP tools (stdio fixture server)", () => {
  it("lists the server's tools as <server>__<tool> with their JSON Schema, category and risk", async () => {
    const { manager, notices } = startManager({
      fx: stdio([FIXTURE], { trustAnnotations: true }),
      risky: stdio([FIXTURE], { risk: "network" }),
      plain: stdio(),
    });
    await manager.start();
    expect(manager.status()).toEqual({ fx: "ready", risky: "ready", plain: "ready" });
    expect(notices).toEqual([]);
    const tools = manager.tools();
    expect(tools.map((t) => t.name)).toEqual([
      "fx__echo",
      "fx__add",
      "fx__fail",
      "fx__slow",
      "fx__crash",
      "fx__dotted_name_10c733",
      "risky__echo",
      "risky__add",
      "risky__fail",
      "risky__slow",
      "risky__crash",
      "risky__dotted_name_10c733",
      "plain__echo",
      "plain__add",
      "plain__fail",
      "plain__slow",
      "plain__crash",
      "plain__dotted_name_10c733",
    ]);
    const add = byName(tools, "fx__add");
    expect(add.jsonSchema).toEqual({
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
      required: ["a", "b"],
    });
    expect(add.description).toBe('[MCP server "fx", tool "add", described by the server] Add two numbers');
    expect([add.category, add.risk, add.concurrent]).toEqual(["exec", "high", false]);
    const echo = byName(tools, "fx__echo");
    expect([echo.category, echo.risk, echo.concurrent]).toEqual(["read", "low", true]);
    expect(byName(tools, "risky__add").category).toBe("network");
    // Annotations of a server without trust_annotations are ignored: its readOnlyHint echo asks.
    expect(byName(tools, "risky__echo").category).toBe("network");
    const plainEcho = byName(tools, "plain__echo");
    expect([plainEcho.category, plainEcho.risk, plainEcho.concurrent]).toEqual(["exec", "high", false]);
  });

  it("calls tools and turns results (text, images, error results) into tool results", async () => {
    const { manager } = startManager({ fx: stdio() });
    await manager.start();
    const tools = manager.tools();
    expect(await call(byName(tools, "fx__add"), { a: 2, b: 3 })).toEqual({ ok: true, output: "5" });
    expect((await call(byName(tools, "fx__echo"), { text: "hi" })).output).toMatch(/^echo: hi \(pid \d+\)$/);
    expect(await call(byName(tools, "fx__fail"), {})).toEqual({
      ok: false,
      output: "something went wrong on the server",
    });
    expect(await call(byName(tools, "fx__dotted_name_10c733"), {})).toEqual({
      ok: true,
      output: "dotted ok\n[image image/png, 4 bytes]",
    });
    expect(await byName(tools, "fx__add").preview?.({ a: 1, b: 2 }, makeContext())).toEqual({
      summary: 'Call add on MCP server "fx"',
      detail: { kind: "code", text: '{\n  "a": 1,\n  "b": 2\n}' },
    });
  });

  it("an interrupted call returns a tool error", async () => {
    const { manager } = startManager({ fx: stdio() });
    await manager.start();
    const context = makeContext();
    const pending = call(byName(manager.tools(), "fx__slow"), {}, context);
    context.controller.abort();
    expect(await pending).toEqual({
      ok: false,
      output: 'the call to slow on MCP server "fx" was interrupted',
    });
    expect(manager.status().fx).toBe("ready");
  });

  it("a crash becomes a tool error and a notice; calls fail fast while down; the server is restarted", async () => {
    const { manager, nextNotice } = startManager({ fx: stdio() });
    await manager.start();
    const tools = manager.tools();
    const pidOf = (output: string) => /pid (\d+)/.exec(output)?.[1];
    const firstPid = pidOf((await call(byName(tools, "fx__echo"), { text: "a" })).output);
    expect(firstPid).toBeDefined();
    const stopped = nextNotice(/stopped unexpectedly/);
    const back = nextNotice(/is running again/);
    const crashed = await call(byName(tools, "fx__crash"), {});
    expect(crashed.ok).toBe(false);
    expect(crashed.output).toMatch(/^crash on MCP server "fx" failed: .*Connection closed/);
    expect(await stopped).toMatch(
      /^MCP server "fx" stopped unexpectedly \(stderr: fixture: crashing on request\); restarting in 0\.1 s\.$/,
    );
    expect(await back).toBe('MCP server "fx" is running again (6 tools).');
    const again = await call(byName(tools, "fx__echo"), { text: "b" });
    expect(again.ok).toBe(true);
    expect(pidOf(again.output)).toBeDefined();
    expect(pidOf(again.output)).not.toBe(firstPid);
  });

  it("calls to a server that is down return a clear tool error", async () => {
    const { manager, nextNotice } = startManager({ fx: stdio() });
    await manager.start();
    const tools = manager.tools();
    const stopped = nextNotice(/stopped unexpectedly/);
    await call(byName(tools, "fx__crash"), {});
    await stopped;
    const result = await call(byName(tools, "fx__echo"), { text: "x" });
    expect(result.ok).toBe(false);
    expect(result.output).toMatch(/MCP server "fx" is not available right now \((down|starting)\)/);
  });

  it("a server that fails to start is reported and retried with growing delays, never thrown", async () => {
    const { manager, notices, nextNotice } = startManager(
      { broken: stdio(["/nonexistent/server.mjs"]) },
      100,
    );
    await manager.start();
    expect(manager.status()).toEqual({ broken: "down" });
    expect(manager.tools()).toEqual([]);
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatch(
      /^MCP server "broken" failed to start: .*Cannot find module.*; restarting in 0\.1 s\.$/,
    );
    expect(await nextNotice(/"broken" failed to start/)).toMatch(/restarting in 0\.2 s\.$/);
    expect(await nextNotice(/"broken" failed to start/)).toMatch(/restarting in 0\.4 s\.$/);
    await manager.close();
    expect(manager.status()).toEqual({ broken: "closed" });
  });
});

describe("MCP over streamable HTTP", () => {
  it("connects with the configured headers, lists and calls tools", async () => {
    const seenAuth: string[] = [];
    const httpServer = http.createServer(async (req, res) => {
      seenAuth.push(req.headers.authorization ?? "");
      const server = new Server({ name: "remote", version: "1.0.0" }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, async () => ({
        tools: [{ name: "whoami", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } }],
      }));
      server.setRequestHandler(CallToolRequestSchema, async () => ({
        content: [{ type: "text", text: "remote user" }],
      }));
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      res.on("close", () => void transport.close());
      await server.connect(transport);
      await transport.handleRequest(req, res);
    });
    await new Promise<void>((resolve) => httpServer.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = httpServer.address() as AddressInfo;
      const { manager } = startManager({
        remote: {
          transport: "http",
          url: `http://127.0.0.1:${port}/mcp`,
          headers: { Authorization: "Bearer t0ken" },
        },
      });
      await manager.start();
      const [whoami] = manager.tools();
      expect(whoami?.name).toBe("remote__whoami");
      expect(await call(whoami as AnyTool, {})).toEqual({ ok: true, output: "remote user" });
      expect(seenAuth.length).toBeGreaterThan(0);
      expect(seenAuth.every((value) => value === "Bearer t0ken")).toBe(true);
      await manager.close();
    } finally {
      httpServer.closeAllConnections();
      await new Promise((resolve) => httpServer.close(resolve));
    }
  });
});

describe("MCP helpers", () => {
  it("sanitises names, classifies tools and formats results", () => {
    expect(mcpToolName("git hub", "repo.search/v2")).toMatch(/^git_hub__repo_search_v2_[0-9a-f]{6}$/);
    expect(mcpToolName("s", "x".repeat(100))).toHaveLength(64);
    const tool = { name: "t", inputSchema: { type: "object" as const } };
    expect(classifyMcpTool(tool, undefined)).toEqual({ category: "exec", risk: "high" });
    expect(classifyMcpTool({ ...tool, annotations: { destructiveHint: false } }, "write", true)).toEqual({
      category: "write",
      risk: "medium",
    });
    expect(classifyMcpTool({ ...tool, annotations: { readOnlyHint: true } }, "exec", true)).toEqual({
      category: "read",
      risk: "low",
    });
    // Untrusted (the default): the hints change nothing.
    expect(classifyMcpTool({ ...tool, annotations: { readOnlyHint: true } }, undefined)).toEqual({
      category: "exec",
      risk: "high",
    });
    expect(classifyMcpTool({ ...tool, annotations: { destructiveHint: false } }, "write")).toEqual({
      category: "write",
      risk: "high",
    });
    expect(formatMcpResult({ content: [], structuredContent: { n: 1 } })).toBe('{\n  "n": 1\n}');
    expect(
      formatMcpResult({ content: [{ type: "resource", resource: { uri: "file:///a", text: "body" } }] }),
    ).toBe("body");
    expect(formatMcpResult({ content: [] })).toBe("(no output)");
  });
});
