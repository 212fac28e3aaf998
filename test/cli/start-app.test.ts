import { EventEmitter } from "node:events";
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import pg from "pg";
import { describe, expect, it } from "vitest";
import type { AppAssembly, ChannelStarter } from "../../src/app/app-parts.js";
import { planChannels } from "../../src/app/channel-plan.js";
import { startApp } from "../../src/app/start-app.js";
import { loadConfig } from "../../src/config/load-config.js";
import { ServiceFailure } from "../../src/core/failure.js";
import type { CoworkerConfig } from "../../src/config/schema.js";
import { createLogger } from "../../src/logging/logger.js";
import { POSTGRES_LOCK_KEY } from "../../src/store/backends/postgres-advisory-lock.js";
import { FakeService } from "../channels/console/fake-service.js";
import { postgresForSuite } from "../support/postgres-server.js";
import { StallingProxy } from "../support/stalling-proxy.js";
import { tempProject } from "./io.js";

const logger = createLogger({ level: "silent" });

function config(yaml: string, env: Record<string, string> = {}): CoworkerConfig {
  const cwd = tempProject();
  writeFileSync(join(cwd, "coworker.yaml"), yaml);
  const loaded = loadConfig({
    env: { OPENAI_API_KEY: "sk-test-0123456789abcdef", ...env },
    cwd,
    argv: ["-c", "coworker.yaml"],
  });
  if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
  return loaded.config;
}

function io() {
  return { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough() };
}

/** What startApp needs to start no channel and a conversation that does nothing, stopped by `signals`. */
function bareStart(signals: EventEmitter) {
  return {
    assembly: { channels: [], createConversation: async () => ({ service: new FakeService({}) }) },
    io: io(),
    version: "9.9.9",
    configSource: undefined,
    forceExit: () => undefined,
    signals,
  };
}

async function readyz(
  url: string | undefined,
): Promise<{ status: number; body: { checks: { name: string; ok: boolean }[] } }> {
  const response = await fetch(`${url}/readyz`);
  return {
    status: response.status,
    body: (await response.json()) as { checks: { name: string; ok: boolean }[] },
  };
}

describe("startApp", () => {
  it("starts ops, store and the console, is ready, and shuts down on SIGTERM draining the session layer", async () => {
    const signals = new EventEmitter();
    const steps: string[] = [];
    const service = new FakeService({});
    const assembly: AppAssembly = {
      channels: [],
      createConversation: async (context) => {
        steps.push(`create with store ${context.store.description.startsWith("sqlite:")}`);
        return {
          service,
          drain: async (graceMs) => steps.push(`drain ${graceMs}`),
          close: async () => {
            steps.push("close conversation");
          },
        };
      },
    };
    const streams = io();
    const app = await startApp(config("server: { shutdown_grace_s: 3 }\nops: { port: 0 }\n"), logger, {
      assembly,
      io: streams,
      version: "9.9.9",
      configSource: undefined,
      forceExit: () => steps.push("forced"),
      signals,
    });
    expect(app.channels).toEqual(["console"]);
    expect((await fetch(`${app.opsUrl ?? ""}/healthz`)).status).toBe(200);
    const ready = await readyz(app.opsUrl);
    expect(ready.status).toBe(200);
    expect(ready.body.checks.map((check) => `${check.name}:${check.ok}`)).toEqual([
      "startup:true",
      "intake:true",
      "store:true",
      "channel:console:true",
    ]);

    signals.emit("SIGTERM");
    expect(await app.stopped).toBe(0);
    expect(steps).toEqual(["create with store true", "drain 3000", "close conversation"]);
    await expect(fetch(`${app.opsUrl ?? ""}/healthz`)).rejects.toThrow();
    expect(signals.listenerCount("SIGTERM")).toBe(0);
  });

  it("starts configured channels instead of the console, gating readiness on their connection", async () => {
    const signals = new EventEmitter();
    const steps: string[] = [];
    let connected = false;
    const slack: ChannelStarter = {
      platform: "slack",
      hasCredentials: (c) => c.slack.bot_token !== undefined,
      start: async (context) => {
        steps.push(`start slack (service ${context.service instanceof FakeService})`);
        return {
          description: "slack (socket mode)",
          connected: () => connected,
          stopIntake: () => {
            steps.push("slack stop intake");
          },
          close: async () => {
            steps.push("slack close");
          },
        };
      },
    };
    const assembly: AppAssembly = {
      channels: [slack],
      createConversation: async () => ({ service: new FakeService({}) }),
    };
    const cfg = config("ops: { port: 0 }\n", {
      SLACK_BOT_TOKEN: "xoxb-1-2-3",
      SLACK_APP_TOKEN: "xapp-1-2-3",
    });
    expect(planChannels(cfg, assembly.channels)).toEqual(["slack"]);
    expect(planChannels(config("{}\n"), assembly.channels)).toEqual(["console"]);
    const streams = io();
    let stderr = "";
    streams.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const app = await startApp(cfg, logger, {
      assembly,
      io: streams,
      version: "9.9.9",
      configSource: "/etc/coworker.yaml",
      forceExit: () => undefined,
      signals,
    });
    expect(app.channels).toEqual(["slack"]);
    expect(stderr).toContain("Coworker 9.9.9\n  channels  slack\n");
    expect(stderr).toContain("config    /etc/coworker.yaml");
    expect(stderr).not.toContain("xoxb-1-2-3");
    expect((await readyz(app.opsUrl)).status).toBe(503);
    connected = true;
    expect((await readyz(app.opsUrl)).status).toBe(200);

    signals.emit("SIGINT");
    expect(await app.stopped).toBe(0);
    expect(steps).toEqual(["start slack (service true)", "slack stop intake", "slack close"]);
  });

  it("registers the configuration's secrets at start, so a log line never shows one", async () => {
    const secret = "mcp-credential-start-3e9d41a7";
    const cfg = config(
      `ops: { enabled: false }\ntools:\n  mcp_servers:\n    gh: { command: gh-mcp, env: { GH_TOKEN: ${secret} } }\n`,
    );
    const lines: string[] = [];
    const captured = createLogger({
      level: "info",
      destination: { write: (line: string) => void lines.push(line) },
      pretty: false,
    });
    captured.warn(`before start: ${secret}`);
    expect(lines.join("")).toContain(secret);
    const signals = new EventEmitter();
    const app = await startApp(cfg, captured, bareStart(signals));
    lines.length = 0;
    captured.warn({ detail: `the server echoed ${secret}` }, `upstream rejected ${secret}`);
    const text = lines.join("");
    expect(text).not.toContain(secret);
    expect(text).toContain("the server echoed [redacted]");
    signals.emit("SIGTERM");
    expect(await app.stopped).toBe(0);
  });

  it("shuts down what it started when a step fails, and rethrows", async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const port = (blocker.address() as AddressInfo).port;
    const signals = new EventEmitter();
    try {
      await expect(startApp(config(`ops: { port: ${port} }\n`), logger, bareStart(signals))).rejects.toThrow(
        `port ${port} on 127.0.0.1 is already in use`,
      );
      expect(signals.listenerCount("SIGTERM")).toBe(0);
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });

  it("refuses a second start on the same data folder with one line, and starts again once the first has stopped", async () => {
    const cfg = config("ops: { enabled: false }\n");
    const firstSignals = new EventEmitter();
    const first = await startApp(cfg, logger, bareStart(firstSignals));
    const lines: string[] = [];
    const captured = createLogger({
      level: "info",
      destination: { write: (line: string) => void lines.push(line) },
      pretty: false,
    });
    const second = await startApp(cfg, captured, bareStart(new EventEmitter())).catch(
      (error: unknown) => error,
    );
    expect(second).toBeInstanceOf(ServiceFailure);
    expect((second as ServiceFailure).line()).toBe(
      `the store is misconfigured: another Coworker process is using the data folder ${cfg.data_dir} — fix: ` +
        "run one process per store, or use Redis (COWORKER_STORE_URL=redis://…) to run several",
    );
    expect(lines.join("")).toContain(
      `another Coworker process is using the data folder ${cfg.data_dir}; waiting up to 5 s for it to stop`,
    );
    firstSignals.emit("SIGTERM");
    expect(await first.stopped).toBe(0);
    const thirdSignals = new EventEmitter();
    const third = await startApp(cfg, logger, bareStart(thirdSignals));
    thirdSignals.emit("SIGTERM");
    expect(await third.stopped).toBe(0);
  }, 20_000);

  it("gives the data folder back when start-up fails after taking it", async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const port = (blocker.address() as AddressInfo).port;
    const cfg = config(`ops: { port: ${port} }\n`);
    try {
      await expect(startApp(cfg, logger, bareStart(new EventEmitter()))).rejects.toThrow("already in use");
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
    const signals = new EventEmitter();
    const app = await startApp({ ...cfg, ops: { ...cfg.ops, enabled: false } }, logger, bareStart(signals));
    signals.emit("SIGTERM");
    expect(await app.stopped).toBe(0);
  });
});

/** A logger whose lines a test can wait for. */
function watchedLogger() {
  const lines: string[] = [];
  const waiters: { text: string; resolve: () => void }[] = [];
  const logger = createLogger({
    level: "info",
    pretty: false,
    destination: {
      write: (line: string) => {
        lines.push(line);
        for (const waiter of waiters.filter((w) => line.includes(w.text))) waiter.resolve();
      },
    },
  });
  const logged = (text: string) =>
    lines.some((line) => line.includes(text))
      ? Promise.resolve()
      : new Promise<void>((resolve) => waiters.push({ text, resolve }));
  return { logger, logged };
}

/** The backend pid of the session holding the single-process lock, if any. */
async function lockHolder(admin: pg.Client): Promise<number | undefined> {
  const { rows } = await admin.query<{ pid: number }>(
    "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = " +
      "(SELECT oid FROM pg_database WHERE datname = current_database()) AND " +
      "((classid::bigint << 32) | objid::bigint) = $1::bigint",
    [POSTGRES_LOCK_KEY],
  );
  return rows[0]?.pid;
}

describe("startApp on Postgres", () => {
  const server = postgresForSuite();

  it("refuses a second start on the same database with one line, and starts again once the first has stopped", async () => {
    const env = { COWORKER_STORE_URL: server.url };
    const firstSignals = new EventEmitter();
    const first = await startApp(config("ops: { enabled: false }\n", env), logger, bareStart(firstSignals));
    // Another data folder: the database is what they share.
    const other = config("ops: { enabled: false }\n", env);
    await expect(startApp(other, logger, bareStart(new EventEmitter()))).rejects.toThrow(
      `another Coworker process is using the Postgres database postgres://127.0.0.1:${server.port}/postgres`,
    );
    firstSignals.emit("SIGTERM");
    expect(await first.stopped).toBe(0);
    const signals = new EventEmitter();
    const again = await startApp(other, logger, bareStart(signals));
    signals.emit("SIGTERM");
    expect(await again.stopped).toBe(0);
  }, 30_000);

  it("takes the lock again when its session ends while the process runs (a server restart, a terminated backend)", async () => {
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    try {
      const signals = new EventEmitter();
      const watched = watchedLogger();
      const start = bareStart(signals);
      const app = await startApp(
        config("ops: { enabled: false }\n", { COWORKER_STORE_URL: server.url }),
        watched.logger,
        start,
      );
      const before = await lockHolder(admin);
      expect(before).toBeDefined();
      await admin.query("SELECT pg_terminate_backend($1, 10000)", [before]);
      await watched.logged("and has been taken again");
      const after = await lockHolder(admin);
      expect(after).toBeDefined();
      expect(after).not.toBe(before);
      signals.emit("SIGTERM");
      expect(await app.stopped).toBe(0);
      expect(await lockHolder(admin)).toBeUndefined();
    } finally {
      await admin.end();
    }
  }, 30_000);

  it("shuts down with one line and exit code 1 when another process took the lost lock first", async () => {
    const proxy = new StallingProxy(server.port);
    const proxyPort = new URL(await proxy.listen()).port;
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    try {
      const start = bareStart(new EventEmitter());
      const url = server.url.replace(`:${server.port}/`, `:${proxyPort}/`);
      const app = await startApp(
        config("ops: { enabled: false }\n", { COWORKER_STORE_URL: url }),
        logger,
        start,
      );
      const holder = await lockHolder(admin);
      expect(holder).toBeDefined();
      // The app cannot hear of its session's end until the proxy forwards again: by then another holds the lock.
      proxy.stall();
      await admin.query("SELECT pg_terminate_backend($1, 10000)", [holder]);
      const taken = await admin.query("SELECT pg_try_advisory_lock($1::bigint) AS locked", [
        POSTGRES_LOCK_KEY,
      ]);
      expect(taken.rows[0].locked).toBe(true);
      proxy.resume();
      expect(await app.stopped).toBe(1);
      let stderr = "";
      for (let chunk = start.io.stderr.read(); chunk !== null; chunk = start.io.stderr.read())
        stderr += chunk;
      expect(stderr).toContain(
        `✗ the single-process lock was lost (its Postgres connection failed: terminating connection due to administrator command) ` +
          `and could not be taken again: another Coworker process is using the Postgres database postgres://127.0.0.1:${proxyPort}/postgres; shutting down\n`,
      );
    } finally {
      await admin.end();
      await proxy.close();
    }
  }, 30_000);
});
