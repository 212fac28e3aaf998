import { EventEmitter } from "node:events";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { AppAssembly, ChannelStarter } from "../../src/app/app-parts.js";
import { runCli } from "../../src/cli/run-cli.js";
import { ENV_OVERRIDES } from "../../src/config/env-overrides.js";
import { deploy, runTests } from "../channels/console/scripts.js";
import { FakeService } from "../channels/console/fake-service.js";
import { tempProject, testIo } from "./io.js";

const KEY = "sk-test-cli-0123456789abcdefghij";
const TELEGRAM = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ";

describe("coworker CLI", () => {
  it("--help lists the commands, the main options and every environment override", async () => {
    const t = testIo(tempProject(), {});
    expect(await runCli(["--help"], t.io)).toBe(0);
    const help = t.stdout();
    for (const text of ["start", "doctor", "--config <file>", "--version", "config/coworker.example.yaml"]) {
      expect(help).toContain(text);
    }
    for (const { env } of ENV_OVERRIDES) expect(help).toContain(env);
    const bare = testIo(tempProject(), {});
    expect(await runCli([], bare.io)).toBe(0);
    expect(bare.stdout()).toBe(help);
  });

  it("--version prints the package version", async () => {
    const t = testIo(tempProject(), {});
    expect(await runCli(["--version"], t.io)).toBe(0);
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
      version: string;
    };
    expect(t.stdout()).toBe(`${pkg.version}\n`);
  });

  it("rejects unknown commands and options with a usage error", async () => {
    const t = testIo(tempProject(), {});
    expect(await runCli(["launch"], t.io)).toBe(2);
    expect(t.stderr()).toContain('unknown command "launch"');
    expect(await runCli(["start", "--port", "1"], t.io)).toBe(2);
    expect(t.stderr()).toContain("Run `coworker --help` for usage.");
  });

  it("start without a model endpoint explains how to point at OpenAI or a local server", async () => {
    const t = testIo(tempProject(), {});
    expect(await runCli(["start"], t.io)).toBe(1);
    expect(t.stderr()).toContain("No model endpoint is configured");
    expect(t.stderr()).toContain("OPENAI_API_KEY=sk-...");
    expect(t.stderr()).toContain("OPENAI_BASE_URL=http://localhost:11434/v1");
  });

  it("start with a bad config lists every problem, without a stack trace or a secret", async () => {
    const cwd = tempProject();
    writeFileSync(
      join(cwd, "coworker.yaml"),
      "slack:\n  bot_tokn: xoxb-1234567890-secretsecret\nagent: { mode: fast }\n",
    );
    const t = testIo(cwd, { OPENAI_API_KEY: KEY });
    expect(await runCli(["start", "-c", "coworker.yaml"], t.io)).toBe(1);
    const err = t.stderr();
    expect(err).toContain("✗ Configuration has 2 problem(s):");
    expect(err).toContain("  - agent.mode: must be one of interactive, auto, plan, discuss");
    expect(err).toContain('  - slack.bot_tokn: unknown key — did you mean "bot_token"?');
    expect(err).not.toMatch(/\n\s+at /);
    expect(err).not.toContain("secretsecret");
    expect(t.stdout()).toBe("");
  });

  it("start runs the console channel over piped stdin, prints a secret-free banner and exits 0 at EOF", async () => {
    const cwd = tempProject();
    writeFileSync(join(cwd, "coworker.yaml"), "ops: { port: 0 }\n");
    const service = new FakeService({ "run the tests": runTests, deploy });
    const assembly: AppAssembly = { createConversation: async () => ({ service }), channels: [] };
    const t = testIo(cwd, { OPENAI_API_KEY: KEY, COWORKER_CONFIG: "coworker.yaml" }, { assembly });
    t.stdin.end("run the tests\na\ndeploy\n1\n");
    expect(await runCli(["start"], t.io)).toBe(0);
    expect(service.turnsDone).toEqual(["t1", "t2"]);
    expect(t.stdout()).toContain("All 12 tests pass.");
    expect(t.stdout()).toContain("Deploying: q0:o0");
    const banner = t.stderr();
    expect(banner).toMatch(/channels {2}console\n/);
    expect(banner).toContain("model     gpt-4o-mini @ https://api.openai.com/v1");
    expect(banner).toMatch(/store {5}sqlite:.*coworker\.sqlite/);
    expect(banner).toContain(`workspace ${join(cwd, "workspace")}`);
    expect(banner).toContain("mode      interactive");
    expect(banner).toContain(`Logs: ${join(cwd, "data", "coworker.log")}`);
    expect(banner).not.toContain(KEY);
    expect(readFileSync(join(cwd, "data", "coworker.log"), "utf8")).toContain('"msg":"coworker started"');
  });

  it("start warns under the banner and in the log when a workspace root is missing or shut", async () => {
    const cwd = tempProject();
    const missing = join(cwd, "not-there");
    writeFileSync(join(cwd, "coworker.yaml"), `ops: { port: 0 }\nworkspace: { extra_roots: [${missing}] }\n`);
    const service = new FakeService({});
    const assembly: AppAssembly = { createConversation: async () => ({ service }), channels: [] };
    const t = testIo(cwd, { OPENAI_API_KEY: KEY, COWORKER_CONFIG: "coworker.yaml" }, { assembly });
    t.stdin.end("");
    expect(await runCli(["start"], t.io)).toBe(0);
    const line = `! workspace: ${missing} does not exist — fix: create ${missing} (mkdir -p)`;
    expect(t.stderr()).toContain(`  ${line}`);
    expect(t.stderr().indexOf(line)).toBeGreaterThan(t.stderr().indexOf("  mode      interactive"));
    expect(readFileSync(join(cwd, "data", "coworker.log"), "utf8")).toContain(line);
  });

  it("start warns when nobody may use the Telegram bot, and not once someone is allowed", async () => {
    const telegram: ChannelStarter = {
      platform: "telegram",
      hasCredentials: (config) => config.telegram.bot_token !== undefined,
      start: async () => ({
        description: "telegram (fake)",
        connected: () => true,
        stopIntake: () => undefined,
        close: async () => undefined,
      }),
    };
    const run = async (env: Record<string, string>) => {
      const cwd = tempProject();
      writeFileSync(join(cwd, "coworker.yaml"), "ops: { port: 0 }\nlog: { level: silent }\n");
      const signals = new EventEmitter();
      const assembly: AppAssembly = {
        createConversation: async () => ({ service: new FakeService({}) }),
        channels: [telegram],
      };
      const t = testIo(
        cwd,
        { OPENAI_API_KEY: KEY, COWORKER_CONFIG: "coworker.yaml", TELEGRAM_BOT_TOKEN: TELEGRAM, ...env },
        { assembly, signals, onStartedUp: () => signals.emit("SIGTERM") },
      );
      expect(await runCli(["start"], t.io)).toBe(0);
      return t.stderr();
    };
    expect(await run({})).toContain(
      "! Telegram access: no allowed users or chats: the bot refuses everyone, and nobody can approve a pairing code — fix: send /start to the bot",
    );
    expect(await run({ TELEGRAM_ALLOWED_USERS: "4567" })).not.toContain("Telegram access");
  });

  it("start reports an assembly without a session layer instead of pretending to run", async () => {
    const cwd = tempProject();
    writeFileSync(join(cwd, "coworker.yaml"), "ops: { port: 0 }\n");
    const t = testIo(
      cwd,
      { OPENAI_API_KEY: KEY, COWORKER_CONFIG: "coworker.yaml" },
      { assembly: { channels: [] } },
    );
    expect(await runCli(["start"], t.io)).toBe(1);
    expect(t.stderr()).toContain("✗ Coworker could not start: no conversation service is assembled");
  });
});
