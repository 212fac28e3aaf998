/**
 * The operations HTTP server: `/healthz` (alive, and no configured channel down past its grace
 * period — so a container healthcheck means something), `/readyz` (every readiness check passes;
 * JSON body listing each) and `/metrics` (Prometheus text). Listens on the configured host and
 * port; port 0 picks a free one; a port in use is one ServiceFailure line, not a stack.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "../logging/logger.js";
import { messageOf, ServiceFailure } from "../core/failure.js";
import type { Metrics } from "./metrics.js";
import type { Readiness } from "./readiness.js";

export interface OpsServerOptions {
  readonly host: string;
  readonly port: number;
  readonly metrics: Metrics;
  readonly readiness: Readiness;
  readonly logger: Logger;
  /** Problems that make the process unhealthy (a channel down too long); default none. */
  readonly health?: () => Promise<readonly string[]>;
}

export interface OpsServer {
  /** The port actually bound. */
  readonly port: number;
  /** `http://host:port` */
  readonly url: string;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { "content-type": contentType, "cache-control": "no-store" });
  res.end(body);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  send(res, status, "application/json; charset=utf-8", `${JSON.stringify(body)}\n`);
}

async function route(req: IncomingMessage, res: ServerResponse, options: OpsServerOptions): Promise<void> {
  const path = new URL(req.url ?? "/", "http://ops").pathname;
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.setHeader("allow", "GET, HEAD");
    sendJson(res, 405, { error: "method not allowed" });
    return;
  }
  switch (path) {
    case "/healthz": {
      const problems = (await options.health?.()) ?? [];
      const uptime_s = Math.round(process.uptime());
      if (problems.length === 0) sendJson(res, 200, { status: "ok", uptime_s });
      else sendJson(res, 503, { status: "unhealthy", uptime_s, problems });
      return;
    }
    case "/readyz": {
      const report = await options.readiness.evaluate();
      sendJson(res, report.ready ? 200 : 503, {
        status: report.ready ? "ready" : "not ready",
        checks: report.checks,
      });
      return;
    }
    case "/metrics":
      send(res, 200, options.metrics.contentType, await options.metrics.render());
      return;
    default:
      sendJson(res, 404, { error: "not found", endpoints: ["/healthz", "/readyz", "/metrics"] });
  }
}

/** Start the server; resolves once it is listening. */
export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const server: Server = createServer((req, res) => {
    route(req, res, options).catch((error: unknown) => {
      options.logger.error({ err: error }, "ops endpoint failed");
      if (!res.headersSent) sendJson(res, 500, { error: "internal error" });
      else res.end();
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error) => reject(listenFailure(error, options.host, options.port)));
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  return {
    port,
    url: `http://${host}:${port}`,
    // Open connections are cut first: an unfinished request would otherwise hold close() open.
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

function listenFailure(error: unknown, host: string, port: number): ServiceFailure {
  const code = (error as { code?: unknown }).code;
  const fix =
    "set COWORKER_OPS_PORT (or ops.port) to a free port — 0 picks any — or turn it off with ops.enabled: false";
  if (code === "EADDRINUSE")
    return new ServiceFailure(
      "the ops server",
      "misconfigured",
      `port ${port} on ${host} is already in use`,
      fix,
      {
        cause: error,
      },
    );
  if (code === "EACCES")
    return new ServiceFailure(
      "the ops server",
      "misconfigured",
      `no permission to listen on port ${port}`,
      fix,
      {
        cause: error,
      },
    );
  return new ServiceFailure(
    "the ops server",
    "misconfigured",
    `cannot listen on ${host}:${port}: ${messageOf(error)}`,
    fix,
    {
      cause: error,
    },
  );
}
