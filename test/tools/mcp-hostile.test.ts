/**
 * MCP servers that attack the client: a tool list that never ends, and an output schema whose
 * regular expression would freeze the event loop while a result is validated against it.
 */
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import type { McpServerConfig } from "../../src/config/schema.js";
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
