/**
 * Start-up as a newcomer and an operator meet it (issue #18): stdin closed, a Telegram API that
 * refuses connections, the ops port taken, Slack unreachable versus a bad token. Real assembly,
 * in-process `coworker start`, fakes on 127.0.0.1; every wait is on output, none on time.
 */
import { writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeOpenAI, startFakeOpenAI } from "../fakes/fake-openai.js";
import { type FakeSlack, startFakeSlack } from "../fakes/fake-slack/index.js";
import { makeProject, runCoworker, startCoworker } from "./run-coworker.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function model(text = "Hello from the fake model."): Promise<FakeOpenAI> {
  const fake = await startFakeOpenAI(() => ({ text }));
  closers.push(() => fake.close());
  return fake;
}

/** A port on 127.0.0.1 where nothing listens (connections are refused). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Resolves once `read()` satisfies `test`, polling on the stream's data events. */
function waitFor(
  stream: NodeJS.EventEmitter,
  read: () => string,
  test: (text: string) => boolean,
): Promise<void> {
  return new Promise((resolve) => {
    const check = (): void => {
      if (!test(read())) return;
      stream.off("data", check);
      resolve();
    };
    stream.on("data", check);
    check();
  });
}

interface Check {
  readonly name: string;
  readonly ok: boolean;
  readonly detail?: string;
}

async function readyz(ops: string): Promise<{ status: number; checks: Check[] }> {
  const response = await fetch(`${ops}/readyz`);
  return { status: response.status, checks: ((await response.json()) as { checks: Check[] }).checks };
}

const OPS = /ops {7}(http:\/\/127\.0\.0\.1:\d+)/;

describe("coworker start, first run and day two", () => {
  it("with stdin closed and no platform, exits 0 with a line saying why (no store-closed race)", async () => {
    const fake = await model();
    const run = runCoworker(makeProject(), fake.baseURL);
    run.stdin.end();
    expect(await run.exited).toBe(0);
    expect(run.stderr()).toContain(
      "Console input ended and no other channel is configured, so Coworker is stopping.",
    );
    expect(run.stderr()).not.toMatch(/is closed|could not start/);
  });

  it("with the Telegram API refusing connections: a warning at once, console usable, readyz says why, one SIGINT exits", async () => {
    const fake = await model("Console still works.");
    const port = await closedPort();
    const project = makeProject("console:\n  enabled: true\nlog:\n  level: silent\n", 2);
    const { t, signals, exited } = startCoworker(project, {
      OPENAI_BASE_URL: fake.baseURL,
      TELEGRAM_BOT_TOKEN: "123456:AAfakeTokenForTests",
      TELEGRAM_API_ROOT: `http://127.0.0.1:${port}`,
    });
    await waitFor(t.io.stderr, t.stderr, (err) =>
      err.includes("! Telegram is unreachable: getMe: ECONNREFUSED"),
    );
    expect(t.stderr()).toContain("fix: check this machine's network access to api.telegram.org");
    expect(t.stderr()).toContain("(attempt 1; next try in 1 s)");

    t.stdin.write("hi\n");
    await waitFor(t.io.stdout, t.stdout, (out) => out.includes("Console still works."));

    const ops = OPS.exec(t.stderr())?.[1] ?? "";
    const ready = await readyz(ops);
    expect(ready.status).toBe(503);
    const telegram = ready.checks.find((check) => check.name === "channel:telegram");
    expect(telegram?.ok).toBe(false);
    expect(telegram?.detail).toMatch(/^retrying: Telegram is unreachable: getMe: ECONNREFUSED/);
    expect(ready.checks.find((check) => check.name === "startup")).toMatchObject({ ok: true });
    // Within the grace period the process counts as healthy.
    expect((await fetch(`${ops}/healthz`)).status).toBe(200);

    signals.emit("SIGINT");
    expect(await exited).toBe(0);
    expect(t.forced).toEqual([]);
  });

  it("says start-up is over once every channel's first connection attempt has ended", async () => {
    const fake = await model();
    const port = await closedPort();
    const project = makeProject("console:\n  enabled: false\nlog:\n  level: silent\n", 2);
    let calls = 0;
    let startedUp: () => void = () => undefined;
    const over = new Promise<void>((resolve) => {
      startedUp = resolve;
    });
    const { t, signals, exited } = startCoworker(
      project,
      {
        OPENAI_BASE_URL: fake.baseURL,
        TELEGRAM_BOT_TOKEN: "123456:AAfakeTokenForTests",
        TELEGRAM_API_ROOT: `http://127.0.0.1:${port}`,
      },
      {
        onStartedUp: () => {
          calls++;
          startedUp();
        },
      },
    );
    try {
      await waitFor(t.io.stderr, t.stderr, (err) => err.includes("! Telegram is unreachable"));
      await over;
    } finally {
      signals.emit("SIGINT");
    }
    expect(await exited).toBe(0);
    expect(calls).toBe(1);
  });

  it("with the ops port taken, fails with one line naming the port and the fix, no stack", async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    closers.push(() => new Promise((resolve) => blocker.close(() => resolve())));
    const { port } = blocker.address() as AddressInfo;
    const fake = await model();
    const { t, exited } = startCoworker(makeProject(), {
      OPENAI_BASE_URL: fake.baseURL,
      COWORKER_OPS_PORT: String(port),
    });
    expect(await exited).toBe(1);
    const lines = t
      .stderr()
      .split("\n")
      .filter((line) => line.startsWith("✗"));
    expect(lines).toEqual([
      `✗ Coworker could not start: the ops server is misconfigured: port ${port} on 127.0.0.1 is already in use — fix: set COWORKER_OPS_PORT (or ops.port) to a free port — 0 picks any — or turn it off with ops.enabled: false`,
    ]);
    expect(`${t.stdout()}${t.stderr()}`).not.toMatch(/\n\s+at /);
  });

  it("runs without the ops server when ops.enabled is false", async () => {
    const fake = await model();
    const project = makeProject();
    writeFileSync(project.configPath, "ops:\n  enabled: false\n");
    const run = runCoworker(project, fake.baseURL);
    run.stdin.end();
    expect(await run.exited).toBe(0);
    expect(run.stderr()).toContain("ops       off (ops.enabled: false)");
  });

  it("tells an unreachable Slack API apart from a rejected bot token", async () => {
    const fake = await model();
    const slack: FakeSlack = await startFakeSlack();
    closers.push(() => slack.close());
    const port = await closedPort();
    const yaml = "log:\n  level: silent\n";

    const rejected = startCoworker(makeProject(yaml), {
      OPENAI_BASE_URL: fake.baseURL,
      SLACK_BOT_TOKEN: "xoxb-wrong-token",
      SLACK_APP_TOKEN: slack.state.appToken,
      SLACK_API_URL: slack.apiUrl,
    });
    await waitFor(rejected.t.io.stderr, rejected.t.stderr, (err) => err.includes("✗ Slack"));
    expect(rejected.t.stderr()).toContain("✗ Slack rejected the credentials: auth.test: invalid_auth");
    expect(rejected.t.stderr()).toContain(
      "fix: put the Bot User OAuth Token (xoxb-…, OAuth & Permissions) in SLACK_BOT_TOKEN",
    );
    expect(rejected.t.stderr()).toContain("(not retrying: fix it, then restart Coworker)");
    rejected.signals.emit("SIGTERM");
    // The signal may arrive while start-up still resumes earlier work: still a clean exit.
    expect(await rejected.exited).toBe(0);

    const unreachable = startCoworker(makeProject(yaml), {
      OPENAI_BASE_URL: fake.baseURL,
      SLACK_BOT_TOKEN: "xoxb-any-token",
      SLACK_APP_TOKEN: "xapp-any-token",
      SLACK_API_URL: `http://127.0.0.1:${port}/api/`,
    });
    await waitFor(unreachable.t.io.stderr, unreachable.t.stderr, (err) => err.includes("! Slack"));
    expect(unreachable.t.stderr()).toContain("! Slack is unreachable: auth.test:");
    expect(unreachable.t.stderr()).toContain("fix: check this machine's network access to slack.com");
    expect(unreachable.t.stderr()).not.toContain("rejected");
    unreachable.signals.emit("SIGTERM");
    expect(await unreachable.exited).toBe(0);
  });
});
