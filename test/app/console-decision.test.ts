/**
 * When `start` runs the console channel, which has no access checks: with `console.enabled: auto`
 * only when no platform is configured — a terminal (docker run -it, tmux) beside Slack no longer
 * adds it — and with `true` beside any platform, said in a warning line at start.
 */
import { EventEmitter } from "node:events";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import type { AppAssembly, ChannelStarter } from "../../src/app/app-parts.js";
import { CONSOLE_UNCHECKED, startApp } from "../../src/app/start-app.js";
import { loadConfig } from "../../src/config/load-config.js";
import { createLogger } from "../../src/logging/logger.js";
import { FakeService } from "../channels/console/fake-service.js";
import { tempProject } from "../cli/io.js";

const SLACK_ENV = { SLACK_BOT_TOKEN: "xoxb-1-2-3", SLACK_APP_TOKEN: "xapp-1-2-3" };

/** A Slack starter that connects at once and does nothing. */
const slack: ChannelStarter = {
  platform: "slack",
  hasCredentials: (config) => config.slack.bot_token !== undefined,
  start: async () => ({
    description: "slack (fake)",
    connected: () => true,
    stopIntake: () => undefined,
    close: async () => undefined,
  }),
};

/** Streams as a person at a terminal has them, or piped ones. */
function streams(tty: boolean) {
  const io = { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough() };
  if (tty) for (const stream of [io.stdin, io.stdout]) Object.assign(stream, { isTTY: true });
  let stderr = "";
  io.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return { io, stderr: () => stderr };
}

const running: { signals: EventEmitter; stopped: Promise<number> }[] = [];

afterEach(async () => {
  for (const app of running.splice(0)) {
    app.signals.emit("SIGTERM");
    expect(await app.stopped).toBe(0);
  }
});

/** Start the app with `yaml` and `env`, on terminal or piped streams; its channels and stderr. */
async function start(options: { yaml?: string; env?: Record<string, string>; tty: boolean }) {
  const cwd = tempProject();
  writeFileSync(join(cwd, "coworker.yaml"), `ops: { enabled: false }\n${options.yaml ?? ""}`);
  const loaded = loadConfig({
    env: { OPENAI_API_KEY: "sk-test-0123456789abcdef", ...options.env },
    cwd,
    argv: ["-c", "coworker.yaml"],
  });
  if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
  const assembly: AppAssembly = {
    channels: [slack],
    createConversation: async () => ({ service: new FakeService({}) }),
  };
  const { io, stderr } = streams(options.tty);
  const signals = new EventEmitter();
  const app = await startApp(loaded.config, createLogger({ level: "silent" }), {
    assembly,
    io,
    version: "9.9.9",
    configSource: undefined,
    forceExit: () => undefined,
    signals,
  });
  running.push({ signals, stopped: app.stopped });
  return { channels: app.channels, stderr: stderr() };
}

describe("console channel at start", () => {
  it("auto, in a terminal, with Slack configured: Slack only, no console", async () => {
    const app = await start({ env: SLACK_ENV, tty: true });
    expect(app.channels).toEqual(["slack"]);
    expect(app.stderr).not.toContain(CONSOLE_UNCHECKED);
  });

  it("auto, in a terminal, with no platform configured: the console, without the warning", async () => {
    const app = await start({ tty: true });
    expect(app.channels).toEqual(["console"]);
    expect(app.stderr).not.toContain(CONSOLE_UNCHECKED);
  });

  it("auto, not a terminal, with Slack configured: no console", async () => {
    const app = await start({ env: SLACK_ENV, tty: false });
    expect(app.channels).toEqual(["slack"]);
  });

  it("true, with Slack configured: the console beside it, and one line saying it is unchecked", async () => {
    const app = await start({ yaml: "console:\n  enabled: true\n", env: SLACK_ENV, tty: false });
    expect(app.channels).toEqual(["slack", "console"]);
    expect(app.stderr.split("\n").filter((line) => line.includes(CONSOLE_UNCHECKED))).toEqual([
      `! ${CONSOLE_UNCHECKED}`,
    ]);
  });

  it("false, with no platform configured: no channel at all", async () => {
    const app = await start({ yaml: "console:\n  enabled: false\n", tty: true });
    expect(app.channels).toEqual([]);
  });
});
