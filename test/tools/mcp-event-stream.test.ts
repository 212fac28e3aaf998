/**
 * A remote MCP server that ends its standing event stream at once, asking for `retry: 0`, had the
 * client reopen it without pause or end (the SDK takes the server's delay and counts its attempts
 * afresh after each clean end). The opens are now spaced, whatever the server asks, and past
 * STREAM_OPENS_PER_MINUTE in a minute the server is stopped, reported and restarted with backoff.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { McpServerConfig } from "../../src/config/schema.js";
import { pacedEventStream, STREAM_OPENS_PER_MINUTE } from "../../src/tools/mcp/event-stream-pace.js";
import { McpManager } from "../../src/tools/mcp/mcp-manager.js";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** A streamable-HTTP MCP server answering initialize and tools/list, whose GET stream ends at once with retry: 0. */
async function stormServer() {
  let gets = 0;
  const waiting: Array<{ count: number; resolve: () => void }> = [];
  const server = http.createServer((req, res) => {
    if (req.method === "GET") {
      gets += 1;
      for (const waiter of waiting.filter((w) => gets >= w.count)) waiter.resolve();
      res.writeHead(200, { "content-type": "text/event-stream", "mcp-session-id": "s1" });
      res.end("id: 1\nretry: 0\n\n");
      return;
    }
    if (req.method === "DELETE") {
      res.writeHead(200).end();
      return;
    }
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      const message = JSON.parse(body) as {
        id?: number;
        method: string;
        params?: { protocolVersion?: string };
      };
      if (message.id === undefined) {
        res.writeHead(202, { "mcp-session-id": "s1" }).end();
        return;
      }
      const result =
        message.method === "initialize"
          ? {
              protocolVersion: message.params?.protocolVersion,
              capabilities: { tools: {} },
              serverInfo: { name: "storm", version: "1" },
            }
          : { tools: [{ name: "t", inputSchema: { type: "object" } }] };
      res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "s1" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const { port } = server.address() as AddressInfo;
  const reached = (count: number) => new Promise<void>((resolve) => waiting.push({ count, resolve }));
  return { url: `http://127.0.0.1:${port}/mcp`, gets: () => gets, reached };
}

describe("a remote MCP server's event stream", () => {
  it("ended again and again with retry: 0, is reopened at most 10 times a minute, then the server is stopped and restarted with backoff, saying why", async () => {
    const storm = await stormServer();
    const notices: string[] = [];
    let noticed: () => void = () => undefined;
    const stopped = new Promise<void>((resolve) => {
      noticed = resolve;
    });
    const manager = new McpManager({
      servers: { storm: { transport: "http", url: storm.url, headers: {} } as McpServerConfig },
      onNotice: (message) => {
        notices.push(message);
        noticed();
      },
      timing: { streamReopenMinMs: 5, restartInitialMs: 60_000, startTimeoutMs: 10_000 },
    });
    closers.push(() => manager.close());
    await manager.start();
    // Before, nothing was reported and the opens went on: 100 is far past the budget.
    await Promise.race([stopped, storm.reached(100)]);
    expect(notices).toEqual([
      'MCP server "storm" reconnects its event stream too often (over 10 times a minute) and was stopped; restarting in 60 s.',
    ]);
    expect(storm.gets()).toBe(STREAM_OPENS_PER_MINUTE);
    expect(manager.status()).toEqual({ storm: "down" });
  });

  it("is opened again no sooner than the least gap after the last open, however soon the server asks", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    const opened: string[] = [];
    const base = async (_url: string | URL, init?: RequestInit) => {
      opened.push(init?.method ?? "GET");
      return new Response("", { status: 200 });
    };
    const onTooOften = vi.fn();
    const paced = pacedEventStream(base, 1_000, onTooOften);
    await paced("http://mcp.example/mcp", { method: "GET" });
    await paced("http://mcp.example/mcp", { method: "POST" });
    expect(opened).toEqual(["GET", "POST"]);
    const second = paced("http://mcp.example/mcp", { method: "GET" });
    await vi.advanceTimersByTimeAsync(999);
    expect(opened).toEqual(["GET", "POST"]);
    await vi.advanceTimersByTimeAsync(1);
    await second;
    expect(opened).toEqual(["GET", "POST", "GET"]);
    expect(onTooOften).not.toHaveBeenCalled();
  });

  it("stops being opened past the budget, answering as a server without a stream (405), and says so once", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    let opens = 0;
    const base = async () => {
      opens += 1;
      return new Response("", { status: 200 });
    };
    const onTooOften = vi.fn();
    const paced = pacedEventStream(base, 1_000, onTooOften);
    const statuses: number[] = [];
    for (let n = 0; n < STREAM_OPENS_PER_MINUTE + 2; n += 1) {
      const response = paced("http://mcp.example/mcp", { method: "GET" });
      await vi.advanceTimersByTimeAsync(1_000);
      statuses.push((await response).status);
    }
    expect(opens).toBe(STREAM_OPENS_PER_MINUTE);
    expect(statuses.slice(STREAM_OPENS_PER_MINUTE)).toEqual([405, 405]);
    expect(onTooOften).toHaveBeenCalledTimes(1);
  });

  it("opened 10 times a minute for long, is never stopped", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    const onTooOften = vi.fn();
    const paced = pacedEventStream(async () => new Response("", { status: 200 }), 1_000, onTooOften);
    for (let n = 0; n < 3 * STREAM_OPENS_PER_MINUTE; n += 1) {
      expect((await paced("http://mcp.example/mcp", { method: "GET" })).status).toBe(200);
      await vi.advanceTimersByTimeAsync(6_001);
    }
    expect(onTooOften).not.toHaveBeenCalled();
  });
});
