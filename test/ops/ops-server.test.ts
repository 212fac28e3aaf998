import { connect } from "node:net";
import os from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { createMetrics } from "../../src/ops/metrics.js";
import type { OpsServer } from "../../src/ops/ops-server.js";
import { Readiness } from "../../src/ops/readiness.js";
import { createCoordination } from "../../src/store/coordination/create-coordination.js";
import { createStore } from "../../src/store/create-store.js";
import { startRedisServer } from "../support/redis-server.js";
import { startTestOpsServer } from "../support/test-ops-server.js";

let server: OpsServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(readiness = new Readiness(), metrics = createMetrics({ processMetrics: false })) {
  server = await startTestOpsServer({ metrics, readiness });
  return { url: server.url, readiness, metrics };
}

describe("ops server", () => {
  it("answers /healthz while alive, on the port it picked", async () => {
    const { url } = await start();
    expect(server?.port).toBeGreaterThan(0);
    const response = await fetch(`${url}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ status: "ok" });
  });

  it("fails /healthz with the problems its health check reports (a channel down too long)", async () => {
    let problems: string[] = [];
    server = await startTestOpsServer({ health: async () => problems });
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    problems = ["telegram down for 301 s"];
    const sick = await fetch(`${server.url}/healthz`);
    expect(sick.status).toBe(503);
    expect(await sick.json()).toMatchObject({ status: "unhealthy", problems: ["telegram down for 301 s"] });
  });

  it("refuses a port in use with one classified line, not an EADDRINUSE stack", async () => {
    const first = await start();
    const port = Number(new URL(first.url).port);
    await expect(startTestOpsServer({ port })).rejects.toMatchObject({
      kind: "misconfigured",
      message: `the ops server is misconfigured: port ${port} on 127.0.0.1 is already in use`,
    });
  });

  it("keeps /readyz red until every check passes, listing each check", async () => {
    const readiness = new Readiness();
    let connected = false;
    readiness.register("channel:slack", () => connected);
    readiness.register("store", async () => ({ ok: true, detail: "sqlite" }));
    const remove = readiness.register("broken", () => {
      throw new Error("boom with xoxb-1234567890-secret");
    });
    const { url } = await start(readiness);

    const red = await fetch(`${url}/readyz`);
    expect(red.status).toBe(503);
    expect(await red.json()).toEqual({
      status: "not ready",
      checks: [
        { name: "channel:slack", ok: false },
        { name: "store", ok: true, detail: "sqlite" },
        { name: "broken", ok: false, detail: "boom with xoxb-[redacted]" },
      ],
    });

    connected = true;
    expect((await fetch(`${url}/readyz`)).status).toBe(503);
    remove();
    const green = await fetch(`${url}/readyz`);
    expect(green.status).toBe(200);
    expect(await green.json()).toMatchObject({
      status: "ready",
      checks: [{ name: "channel:slack", ok: true }, { name: "store" }],
    });
  });

  it("says why the store and the coordination are not ready: a real Redis that went away", async () => {
    const redis = await startRedisServer();
    const store = await createStore({ url: redis.url, dataDir: os.tmpdir() });
    const coordination = await createCoordination({ url: redis.url, dataDir: os.tmpdir(), store });
    try {
      const readiness = new Readiness();
      readiness.register("store", () => store.ping());
      readiness.register("coordination", () => coordination.ping());
      const { url } = await start(readiness);
      expect((await fetch(`${url}/readyz`)).status).toBe(200);

      await redis.stop();
      const red = await fetch(`${url}/readyz`);
      expect(red.status).toBe(503);
      expect(await red.json()).toEqual({
        status: "not ready",
        checks: [
          { name: "store", ok: false, detail: "The client is offline" },
          { name: "coordination", ok: false, detail: "The client is offline" },
        ],
      });
    } finally {
      await coordination.close();
      await store.close();
      await redis.stop();
    }
  });

  it("redacts credentials in a not-ready store's reason", async () => {
    const readiness = new Readiness();
    readiness.register("store", async () => ({
      ok: false,
      detail: "connect to redis://:s3cret@10.0.0.5:6379 failed",
    }));
    const { url } = await start(readiness);
    const red = await fetch(`${url}/readyz`);
    expect(red.status).toBe(503);
    expect(await red.json()).toEqual({
      status: "not ready",
      checks: [{ name: "store", ok: false, detail: "connect to redis://:[redacted]@10.0.0.5:6379 failed" }],
    });
  });

  it("runs the checks once for /readyz requests that arrive together, each answered with that run", async () => {
    // A store ping per request: 50 strangers' requests at once held 50 pooled store connections.
    const readiness = new Readiness();
    let pings = 0;
    readiness.register("store", async () => {
      pings += 1;
      await new Promise((resolve) => setTimeout(resolve, 500));
      return true;
    });
    const { url } = await start(readiness);
    const answers = await Promise.all(Array.from({ length: 50 }, () => fetch(`${url}/readyz`)));
    expect(answers.map((answer) => answer.status)).toEqual(Array(50).fill(200));
    expect(pings).toBe(1);
    // Once that run ended, the next request runs the checks again.
    await fetch(`${url}/readyz`);
    expect(pings).toBe(2);
  });

  it("reports a check that does not answer in time as failing", async () => {
    const readiness = new Readiness();
    readiness.register("hangs", () => new Promise<boolean>(() => undefined));
    const report = await readiness.evaluate(20);
    expect(report).toEqual({
      ready: false,
      checks: [{ name: "hangs", ok: false, detail: "no answer within 20 ms" }],
    });
  });

  it("serves Prometheus metrics that others increment", async () => {
    const metrics = createMetrics({ processMetrics: false });
    const { url } = await start(new Readiness(), metrics);
    metrics.turnStarted("slack");
    metrics.turnFinished("slack", "completed", 1500);
    metrics.toolCallFinished("run_command", "ok", 3200);
    metrics.toolCallFinished("run_command", "denied", 0);
    metrics.approvalRequested("telegram");
    metrics.approvalRequested("telegram");
    metrics.approvalResolved("telegram", "once");
    metrics.modelRequestFinished("gpt-4o-mini", "ok", 800, 120);
    metrics.tokensUsed("gpt-4o-mini", "prompt", 1200);
    metrics.messageReceived("slack", "duplicate");
    metrics.error("model");

    const response = await fetch(`${url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    expect(text).toContain("# TYPE coworker_turns_total counter");
    expect(text).toContain('coworker_turns_total{platform="slack",status="completed"} 1');
    expect(text).toContain('coworker_turns_running{platform="slack"} 0');
    expect(text).toContain('coworker_turn_duration_seconds_bucket{le="2",platform="slack"} 1');
    expect(text).toContain('coworker_tool_calls_total{tool="run_command",status="denied"} 1');
    expect(text).toContain('coworker_tool_call_duration_seconds_sum{tool="run_command"} 3.2');
    expect(text).toContain("# TYPE coworker_approvals_pending gauge");
    expect(text).toContain('coworker_approvals_pending{platform="telegram"} 1');
    expect(text).toContain('coworker_approvals_resolved_total{platform="telegram",outcome="once"} 1');
    expect(text).toContain(
      'coworker_model_request_duration_seconds_count{model="gpt-4o-mini",outcome="ok"} 1',
    );
    expect(text).toContain('coworker_model_first_token_seconds_bucket{le="0.25",model="gpt-4o-mini"} 1');
    expect(text).toContain('coworker_model_tokens_total{model="gpt-4o-mini",kind="prompt"} 1200');
    expect(text).toContain('coworker_inbound_messages_total{platform="slack",result="duplicate"} 1');
    expect(text).toContain('coworker_errors_total{area="model"} 1');
  });

  it("includes process metrics by default and keeps registries apart", async () => {
    const withProcess = await createMetrics().render();
    expect(withProcess).toContain("coworker_process_cpu_seconds_total");
    const other = createMetrics({ processMetrics: false });
    other.error("store");
    expect(await createMetrics({ processMetrics: false }).render()).not.toContain('area="store"');
  });

  it("closes while a stranger's request is unfinished (its body never comes)", async () => {
    const { url } = await start();
    const stranger = connect(Number(new URL(url).port), "127.0.0.1");
    stranger.on("error", () => undefined);
    stranger.write("POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{");
    const answered = await new Promise<string>((resolve) => stranger.once("data", (d) => resolve(String(d))));
    expect(answered.split("\r\n")[0]).toBe("HTTP/1.1 405 Method Not Allowed");
    const closing = server?.close();
    server = undefined;
    await closing; // before, it waited for the rest of the request, which never comes
    stranger.destroy();
  });

  it("answers unknown paths with 404 and other methods with 405", async () => {
    const { url } = await start();
    expect((await fetch(`${url}/nope`)).status).toBe(404);
    const post = await fetch(`${url}/healthz`, { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
  });
});
