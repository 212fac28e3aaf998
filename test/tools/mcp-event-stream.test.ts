/**
 * A remote MCP server's event streams: one that ends its standing stream at once, asking for
 * `retry: 0`, had the client reopen it without pause or end (the SDK takes the server's delay and
 * counts its attempts afresh after each clean end), so the opens are spaced, whatever the server
 * asks, and past STREAM_OPENS_PER_MINUTE in a minute the standing stream is given up, said once,
 * while the server and its tools go on; after a cool-down (1 min, on an injected clock) it is
 * opened again, and said once when it is back (mcp-stream-cool-down.test.ts has the cool-downs on
 * the pace alone). A call's answer that the server ends after an event with only an id (the
 * specification's SSE polling) is resumed as often as a long call needs, spaced too; past
 * RESUMES_PER_MINUTE resumes in a minute only the call resuming fails.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { McpServerConfig } from "../../src/config/schema.js";
import type { Clock } from "../../src/core/clock.js";
import {
  EventStreamPace,
  RESUMES_PER_MINUTE,
  STREAM_OPENS_PER_MINUTE,
  type StandingStreamEvents,
} from "../../src/tools/mcp/event-stream-pace.js";
import { McpManager } from "../../src/tools/mcp/mcp-manager.js";
import { McpServerConnection } from "../../src/tools/mcp/mcp-server-connection.js";
import { ManualClock } from "../schedules/support.js";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(closers.splice(0).map((close) => close()));
});

type Answer = (req: http.IncomingMessage, res: http.ServerResponse) => void;
const sse = { "content-type": "text/event-stream", "mcp-session-id": "s1" };

/**
 * A streamable-HTTP MCP server answering initialize and tools/list (tools "slow" and "quick");
 * `onGet` answers its GETs and `onSlow` a call to "slow" (given its request id); "quick" answers
 * at once.
 */
async function fakeServer(onGet: Answer, onSlow: (id: number, res: http.ServerResponse) => void = () => {}) {
  const server = http.createServer((req, res) => {
    if (req.method === "GET") {
      onGet(req, res);
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
        params?: { protocolVersion?: string; name?: string };
      };
      if (message.id === undefined) {
        res.writeHead(202, { "mcp-session-id": "s1" }).end();
        return;
      }
      if (message.method === "tools/call" && message.params?.name === "slow") {
        onSlow(message.id, res);
        return;
      }
      const result =
        message.method === "initialize"
          ? {
              protocolVersion: message.params?.protocolVersion,
              capabilities: { tools: {} },
              serverInfo: { name: "fake", version: "1" },
            }
          : message.method === "tools/call"
            ? { content: [{ type: "text", text: "quick answer" }] }
            : {
                tools: [
                  { name: "slow", inputSchema: { type: "object" } },
                  { name: "quick", inputSchema: { type: "object" } },
                ],
              };
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
  return `http://127.0.0.1:${port}/mcp`;
}

/** A server whose standing stream ends at once with retry: 0. */
async function stormServer() {
  let gets = 0;
  const waiting: Array<{ count: number; resolve: () => void }> = [];
  const url = await fakeServer((_req, res) => {
    gets += 1;
    for (const waiter of waiting.filter((w) => gets >= w.count)) waiter.resolve();
    res.writeHead(200, sse);
    res.end("id: 1\nretry: 0\n\n");
  });
  const reached = (count: number) => new Promise<void>((resolve) => waiting.push({ count, resolve }));
  return { url, gets: () => gets, reached };
}

/**
 * A server with no standing stream (405) that polls: a call to "slow" gets an event with only an
 * id and retry: 0, and so does each resume of it, until `resumesNeeded` resumes have come.
 */
async function pollingServer(resumesNeeded: number) {
  let resumes = 0;
  let callId: number | undefined;
  const url = await fakeServer(
    (req, res) => {
      if (!req.headers["last-event-id"]) {
        res.writeHead(405).end();
        return;
      }
      resumes += 1;
      res.writeHead(200, sse);
      if (resumes < resumesNeeded) {
        res.end(`id: p${resumes}\nretry: 0\ndata:\n\n`);
        return;
      }
      const result = { content: [{ type: "text", text: "done after polling" }] };
      res.end(`id: done\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: callId, result })}\n\n`);
    },
    (id, res) => {
      callId = id;
      res.writeHead(200, sse);
      res.end("id: p0\nretry: 0\ndata:\n\n");
    },
  );
  return { url, resumes: () => resumes };
}

const MIN = 60_000;

/**
 * A connection to the server at `url`, its notices (`said(n)` resolves once there are n) and a
 * tool caller; its least gap is `minGapMs` and its time is `clock`'s.
 */
async function connect(url: string, clock?: Clock, minGapMs = 5) {
  const notices: string[] = [];
  const waiting: Array<{ count: number; resolve: () => void }> = [];
  const connection = new McpServerConnection(
    "poll",
    { transport: "http", url, headers: {} } as McpServerConfig,
    {
      startTimeoutMs: 10_000,
      callTimeoutMs: 15_000,
      restartInitialMs: 60_000,
      restartMaxMs: 60_000,
      stableAfterMs: 60_000,
      streamReopenMinMs: minGapMs,
      streamRetryInitialMs: MIN,
      streamRetryMaxMs: 30 * MIN,
    },
    (message) => {
      notices.push(message);
      for (const waiter of waiting.filter((w) => notices.length >= w.count)) waiter.resolve();
    },
    undefined,
    undefined,
    clock,
  );
  closers.push(() => connection.close());
  await connection.start();
  expect(connection.state).toBe("ready");
  const call = (tool: string) =>
    connection.callTool(tool, {}, new AbortController().signal).then(
      (result) => `ok: ${JSON.stringify(result.content)}`,
      (error: unknown) => `failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  const said = (count: number) =>
    new Promise<void>((resolve) => {
      if (notices.length >= count) resolve();
      else waiting.push({ count, resolve });
    });
  return { connection, notices, call, said };
}

/** A pace with the least gap `minGapMs` and cool-downs of 1 min doubled up to 30 min. */
const paceOf = (minGapMs: number, events: StandingStreamEvents, clock?: Clock) =>
  new EventStreamPace({ minGapMs, retryInitialMs: MIN, retryMaxMs: 30 * MIN }, events, clock);
const noEvents: StandingStreamEvents = { givenUp: () => undefined, back: () => undefined };

const get = (lastEventId?: string): RequestInit => ({
  method: "GET",
  headers: new Headers(lastEventId === undefined ? {} : { "last-event-id": lastEventId }),
});

describe("a remote MCP server's event stream", () => {
  it("ended again and again with retry: 0, is reopened at most 10 times a minute, then given up, saying so once, while the server stays up", async () => {
    const storm = await stormServer();
    const notices: string[] = [];
    let noticed: () => void = () => undefined;
    const said = new Promise<void>((resolve) => {
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
    // Before the pace, nothing was reported and the opens went on: 100 is far past the budget.
    await Promise.race([said, storm.reached(100)]);
    expect(notices).toEqual([
      'MCP server "storm" reopens its event stream too often (over 10 times a minute), so it is not listened to between calls for 1 min; its tools still work.',
    ]);
    expect(storm.gets()).toBe(STREAM_OPENS_PER_MINUTE);
    expect(manager.status()).toEqual({ storm: "ready" });
  });

  it("is opened again no sooner than the least gap after the last open, however soon the server asks", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    const opened: string[] = [];
    const base = async (_url: string | URL, init?: RequestInit) => {
      opened.push(init?.method ?? "GET");
      return new Response("", { status: 200 });
    };
    const onStopped = vi.fn();
    const paced = paceOf(1_000, { ...noEvents, givenUp: onStopped }).fetch(base);
    await paced("http://mcp.example/mcp", get());
    await paced("http://mcp.example/mcp", { method: "POST" });
    expect(opened).toEqual(["GET", "POST"]);
    const second = paced("http://mcp.example/mcp", get("1"));
    await vi.advanceTimersByTimeAsync(999);
    expect(opened).toEqual(["GET", "POST"]);
    await vi.advanceTimersByTimeAsync(1);
    await second;
    expect(opened).toEqual(["GET", "POST", "GET"]);
    expect(onStopped).not.toHaveBeenCalled();
  });

  it("stops being opened past the budget, answering as a server without a stream (405), and says so once", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    let opens = 0;
    const base = async () => {
      opens += 1;
      return new Response("", { status: 200 });
    };
    const onStopped = vi.fn();
    const paced = paceOf(1_000, { ...noEvents, givenUp: onStopped }).fetch(base);
    const statuses: number[] = [];
    for (let n = 0; n < STREAM_OPENS_PER_MINUTE + 2; n += 1) {
      const response = paced("http://mcp.example/mcp", get());
      await vi.advanceTimersByTimeAsync(1_000);
      statuses.push((await response).status);
    }
    expect(opens).toBe(STREAM_OPENS_PER_MINUTE);
    expect(statuses.slice(STREAM_OPENS_PER_MINUTE)).toEqual([405, 405]);
    expect(onStopped).toHaveBeenCalledTimes(1);
    expect(onStopped).toHaveBeenCalledWith(MIN);
  });

  it("opened 10 times a minute for long, is never stopped", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    const onStopped = vi.fn();
    const paced = paceOf(1_000, { ...noEvents, givenUp: onStopped }).fetch(
      async () => new Response("", { status: 200 }),
    );
    for (let n = 0; n < 3 * STREAM_OPENS_PER_MINUTE; n += 1) {
      expect((await paced("http://mcp.example/mcp", get())).status).toBe(200);
      await vi.advanceTimersByTimeAsync(6_001);
    }
    expect(onStopped).not.toHaveBeenCalled();
  });

  it("from a real server that keeps ending it, comes back after 1 min and is given up for 2 min the next time, the server up throughout", async () => {
    const storm = await stormServer();
    const clock = new ManualClock(0);
    const { connection, notices, call, said } = await connect(storm.url, clock, 0);
    await said(1);
    expect(storm.gets()).toBe(STREAM_OPENS_PER_MINUTE);
    clock.advance(MIN);
    await said(3);
    expect(notices).toEqual([
      'MCP server "poll" reopens its event stream too often (over 10 times a minute), so it is not listened to between calls for 1 min; its tools still work.',
      'MCP server "poll" is listened to between calls again.',
      'MCP server "poll" reopens its event stream too often (over 10 times a minute), so it is not listened to between calls for 2 min; its tools still work.',
    ]);
    expect(storm.gets()).toBe(2 * STREAM_OPENS_PER_MINUTE);
    expect(connection.state).toBe("ready");
    expect(await call("quick")).toBe('ok: [{"type":"text","text":"quick answer"}]');
  });
});

describe("a remote MCP server's resumes of a call's answer", () => {
  it("from a polling server, let a long call resume 15 times in a minute and complete, and the server stays up", async () => {
    const server = await pollingServer(15);
    const { connection, notices, call } = await connect(server.url);
    expect(await call("slow")).toBe('ok: [{"type":"text","text":"done after polling"}]');
    expect(server.resumes()).toBe(15);
    expect(notices).toEqual([]);
    expect(connection.state).toBe("ready");
  });

  it("asked for again and again with retry: 0, are made at most 120 times a minute, then only that call fails and the server stays up", async () => {
    const server = await pollingServer(Number.POSITIVE_INFINITY);
    const { connection, notices, call } = await connect(server.url);
    expect(await call("slow")).toBe(
      `failed: MCP server "poll" resumed its calls' answers too often (over ${RESUMES_PER_MINUTE} times a minute); the call to slow was stopped`,
    );
    expect(server.resumes()).toBe(RESUMES_PER_MINUTE);
    expect(notices).toEqual([]);
    expect(connection.state).toBe("ready");
    expect(await call("quick")).toBe('ok: [{"type":"text","text":"quick answer"}]');
  });

  it("are spaced by the least gap per call, and a resume of a call that has ended is refused (405) without reaching the server", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    const resumed: string[] = [];
    const base = async (_url: string | URL, init?: RequestInit) => {
      resumed.push(new Headers(init?.headers).get("last-event-id") ?? "");
      return new Response("", { status: 200 });
    };
    const onStopped = vi.fn();
    const pace = paceOf(1_000, { ...noEvents, givenUp: onStopped });
    const paced = pace.fetch(base);
    const first = pace.follow(() => {});
    const second = pace.follow(() => {});
    first.onresumptiontoken("a1");
    second.onresumptiontoken("b1");
    await paced("http://mcp.example/mcp", get("a1"));
    // Another call's resume does not wait for the first's.
    await paced("http://mcp.example/mcp", get("b1"));
    expect(resumed).toEqual(["a1", "b1"]);
    first.onresumptiontoken("a2");
    const again = paced("http://mcp.example/mcp", get("a2"));
    await vi.advanceTimersByTimeAsync(999);
    expect(resumed).toEqual(["a1", "b1"]);
    await vi.advanceTimersByTimeAsync(1);
    await again;
    expect(resumed).toEqual(["a1", "b1", "a2"]);
    first.end();
    expect((await paced("http://mcp.example/mcp", get("a2"))).status).toBe(405);
    expect(resumed).toEqual(["a1", "b1", "a2"]);
    expect(onStopped).not.toHaveBeenCalled();
  });
});
