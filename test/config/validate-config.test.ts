/**
 * The validation `doctor` and `start` share (loadConfig): blank variables where a value is
 * required, token and id formats with a hint, half-configured Slack, stdio MCP servers whose
 * folder would lie inside the workspace, a store URL username, password or Postgres database name
 * its client cannot decode, a Redis key prefix for a store that is not Redis — and never a secret echoed.
 */
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/run-cli.js";
import type { Env } from "../../src/config/env-overrides.js";
import { loadConfig } from "../../src/config/load-config.js";
import { expectStartAndDoctorRefuse, testIo } from "../cli/io.js";

function load(env: Env, yaml?: string) {
  const cwd = mkdtempSync(join(tmpdir(), "coworker-validate-"));
  if (yaml !== undefined) writeFileSync(join(cwd, "coworker.yaml"), yaml);
  return loadConfig({ env, cwd, ...(yaml !== undefined ? { argv: ["-c", "coworker.yaml"] } : {}) });
}

function problems(env: Env, yaml?: string): string {
  const result = load(env, yaml);
  if (result.ok) throw new Error("expected problems, got a valid config");
  return result.problems.join("\n");
}

const LOCAL = { OPENAI_BASE_URL: "http://localhost:11434/v1" };

describe("config validation", () => {
  it("rejects OPENAI_API_KEY= (blank) when nothing else points at a model, naming the variable", () => {
    expect(problems({ OPENAI_API_KEY: "" })).toMatch(/^OPENAI_API_KEY is set but empty.*OPENAI_BASE_URL/);
    expect(problems({ OPENAI_API_KEY: "   " })).toContain("OPENAI_API_KEY is set but empty");
    // With a local endpoint a blank key just means "no key".
    expect(load({ ...LOCAL, OPENAI_API_KEY: "" }).ok).toBe(true);
  });

  it("start and doctor both refuse a blank OPENAI_API_KEY with the same line", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "coworker-validate-"));
    const start = testIo(cwd, { OPENAI_API_KEY: "" });
    expect(await runCli(["start"], start.io)).toBe(1);
    expect(start.stderr()).toContain("OPENAI_API_KEY is set but empty");
    expect(start.stderr()).not.toContain("Missing credentials");
    const doctor = testIo(cwd, { OPENAI_API_KEY: "" });
    expect(await runCli(["doctor"], doctor.io)).toBe(1);
    expect(doctor.stdout()).toContain("✗ configuration");
    expect(doctor.stdout()).toContain("OPENAI_API_KEY is set but empty");
  });

  it("start and doctor both refuse store_redis_prefix on a store that is not Redis, naming the key and the store", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "coworker-validate-"));
    const env = { ...LOCAL, COWORKER_STORE_REDIS_PREFIX: "team-a" };
    const line =
      'store_redis_prefix (COWORKER_STORE_REDIS_PREFIX) is set to "team-a", but the store in use is the embedded SQLite file';
    await expectStartAndDoctorRefuse(cwd, env, line);
    // With a Redis URL the prefix is what it is for.
    expect(load({ ...env, COWORKER_STORE_URL: "redis://localhost:6379" }).ok).toBe(true);
  });

  it("start and doctor both refuse a store_url password with a bare %, naming the fix and never the password", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "coworker-validate-"));
    const env = { ...LOCAL, COWORKER_STORE_URL: "redis://:pa%ss-word-77@127.0.0.1:6379" };
    await expectStartAndDoctorRefuse(
      cwd,
      env,
      "the password in store_url (COWORKER_STORE_URL) has a % not followed by two hex digits: percent-encode it as %25",
    );
    const fromFile = problems(LOCAL, 'store_url: "postgres://bot:pa%ss-word-77@db/coworker"\n');
    expect(fromFile).toBe(
      "the password in store_url has a % not followed by two hex digits: percent-encode it as %25",
    );
    expect(problems(LOCAL, 'store_url: "redis://:%FFss-word-77@cache:6379"\n')).toBe(
      "the password in store_url has %-escapes that do not spell UTF-8 text: percent-encode a literal % as %25",
    );
    expect(load({ ...LOCAL, COWORKER_STORE_URL: "redis://:pa%25ss-word-77@127.0.0.1:6379" }).ok).toBe(true);
  });

  it("refuses a store_url username or Postgres database name its client cannot decode, naming the part and never the password", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "coworker-validate-"));
    const env = { ...LOCAL, COWORKER_STORE_URL: "redis://ops%team:secret-77@127.0.0.1:6379" };
    await expectStartAndDoctorRefuse(
      cwd,
      env,
      "the username in store_url (COWORKER_STORE_URL) has a % not followed by two hex digits: percent-encode it as %25",
    );
    const database = problems(LOCAL, 'store_url: "postgres://bot:secret-77@db/coworker%"\n');
    expect(database).toBe(
      "the database name in store_url has a % not followed by two hex digits: percent-encode it as %25",
    );
    const both = problems(LOCAL, 'store_url: "postgresql://b%FFt:secret-77@db/co%E2%82"\n');
    expect(both).toBe(
      "the username in store_url has %-escapes that do not spell UTF-8 text: percent-encode a literal % as %25\n" +
        "the database name in store_url has %-escapes that do not spell UTF-8 text: percent-encode a literal % as %25",
    );
    expect(`${database}\n${both}`).not.toContain("secret-77");
    expect(load({ ...LOCAL, COWORKER_STORE_URL: "redis://ops%25team:secret-77@127.0.0.1:6379/0" }).ok).toBe(
      true,
    );
    expect(load({ ...LOCAL, COWORKER_STORE_URL: "postgres://ops%25team:s@db/co%25worker" }).ok).toBe(true);
  });

  it("checks token formats before any network call, with a hint and without echoing the token", () => {
    const wrongSlack = problems({
      ...LOCAL,
      SLACK_BOT_TOKEN: "xoxp-user-token-123",
      SLACK_APP_TOKEN: "xoxb-1-2",
    });
    expect(wrongSlack).toContain('slack.bot_token (from SLACK_BOT_TOKEN): must start with "xoxb-"');
    expect(wrongSlack).toContain('slack.app_token (from SLACK_APP_TOKEN): must start with "xapp-"');
    expect(wrongSlack).not.toContain("xoxp-user-token-123");
    const wrongTelegram = problems({ ...LOCAL, TELEGRAM_BOT_TOKEN: "AAsecretWithoutBotId" });
    expect(wrongTelegram).toContain(
      'telegram.bot_token (from TELEGRAM_BOT_TOKEN): must look like "123456789:AA…"',
    );
    expect(wrongTelegram).not.toContain("AAsecretWithoutBotId");
    expect(load({ ...LOCAL, TELEGRAM_BOT_TOKEN: "123456789:AAGood-Token_01" }).ok).toBe(true);
  });

  it("checks user, channel and approver ids with a hint", () => {
    const text = problems(
      LOCAL,
      [
        "slack:",
        "  allowed_users: [U0123ABCD, alice]",
        "  allowed_channels: ['#general']",
        "telegram:",
        "  allowed_users: [4567, '@ana']",
        "approvals:",
        "  approvers: [slack:U0123ABCD, U0999, telegram:bob, slack:alice]",
      ].join("\n"),
    );
    expect(text).toContain("slack.allowed_users[1]");
    expect(text).toContain("is not a Slack member id");
    expect(text).toContain("slack.allowed_channels[0]");
    expect(text).toContain("telegram.allowed_users[1]");
    expect(text).toContain("not @usernames");
    expect(text).toContain(
      'approvals.approvers[1]: is not platform-qualified: write "slack:U0123ABCD" or "telegram:4567" (got "U0999")',
    );
    expect(text).toContain(
      'approvals.approvers[2]: has no Telegram user id after telegram: (they are numbers such as 4567) (got "telegram:bob")',
    );
    expect(text).toContain("approvals.approvers[3]: has no Slack member id after slack:");
    expect(text).not.toContain("approvals.approvers[0]");
  });

  it("checks approvals.per_channel keys: a Slack channel id or a Telegram chat id, naming the key", () => {
    const text = problems(
      LOCAL,
      [
        "approvals:",
        "  per_channel:",
        '    "slack:C0123ABCD": [slack:U0123ABCD]',
        '    "slack:G0123ABCD": [slack:U0123ABCD]',
        '    "telegram:-1001234567890": [telegram:4567]',
        '    "telegram:4567": [telegram:4567]',
        '    "slack:general": [slack:U0123ABCD]',
        '    "telegram:@team": [telegram:4567]',
        '    "C0999": [slack:U0123ABCD]',
        '    "slak:C0999": [slack:U0123ABCD]',
      ].join("\n"),
    );
    expect(text).toContain(
      'approvals.per_channel.slack:general: the key "slack:general" has no Slack channel id after slack: — write "slack:C0123ABCD"',
    );
    expect(text).toContain(
      'approvals.per_channel.telegram:@team: the key "telegram:@team" has no Telegram chat id',
    );
    expect(text).toContain(
      'approvals.per_channel.C0999: the key "C0999" is not "slack:<channel id>" or "telegram:<chat id>"',
    );
    expect(text).toContain('approvals.per_channel.slak:C0999: the key "slak:C0999" is not');
    for (const good of ["slack:C0123ABCD", "slack:G0123ABCD", "telegram:-1001234567890", "telegram:4567"])
      expect(text).not.toContain(`per_channel.${good}`);
    expect(text.split("\n").filter((line) => line.includes("per_channel"))).toHaveLength(4);
  });

  it("takes well-formed approvals.per_channel keys", () => {
    const result = load(
      LOCAL,
      [
        "approvals:",
        '  per_channel: { "slack:C0123": [slack:U0456], "telegram:-100123": [telegram:7] }',
      ].join("\n"),
    );
    if (!result.ok) throw new Error(result.problems.join("\n"));
    expect(result.config.approvals.per_channel).toEqual({
      "slack:C0123": ["slack:U0456"],
      "telegram:-100123": ["telegram:7"],
    });
  });

  it("rejects a half-configured Slack instead of silently skipping it", () => {
    expect(problems({ ...LOCAL, SLACK_BOT_TOKEN: "xoxb-1-2" })).toContain(
      "slack.bot_token (SLACK_BOT_TOKEN) is set, but Slack also needs slack.app_token (SLACK_APP_TOKEN) for Socket Mode",
    );
    expect(problems({ ...LOCAL, SLACK_BOT_TOKEN: "xoxb-1-2", SLACK_APP_TOKEN: "" })).toContain(
      "SLACK_APP_TOKEN is set but empty",
    );
    expect(problems({ ...LOCAL, SLACK_APP_TOKEN: "xapp-1-2" })).toContain(
      "slack.app_token (SLACK_APP_TOKEN) is set, but Slack also needs slack.bot_token (SLACK_BOT_TOKEN)",
    );
  });

  it("reads COWORKER_OPS_PORT as a number and names it when it is not one", () => {
    const ok = load({ ...LOCAL, COWORKER_OPS_PORT: "0" });
    expect(ok.ok && ok.config.ops.port).toBe(0);
    expect(problems({ ...LOCAL, COWORKER_OPS_PORT: "eighty" })).toContain(
      "ops.port (from COWORKER_OPS_PORT)",
    );
  });

  it("takes model choices people can name with `model`, and refuses one no command could choose", () => {
    const ok = load(LOCAL, "model:\n  choices: [gpt-4.1, openai/gpt-4o-mini]\n");
    expect(ok.ok && ok.config.model.choices).toEqual(["gpt-4.1", "openai/gpt-4o-mini"]);
    expect(problems(LOCAL, 'model:\n  choices: ["gpt 4"]\n')).toContain(
      "must be a model name (letters, digits and . : / @ _ - only)",
    );
  });

  describe("stdio MCP servers outside the workspace", () => {
    const STDIO = "tools:\n  mcp_servers:\n    git: { command: uvx, args: [mcp-server-git] }\n";
    const HTTP = '    docs: { url: "https://mcp.example.com/mcp" }\n';
    const project = () => realpathSync(mkdtempSync(join(tmpdir(), "coworker-mcp-folders-")));
    const at = (cwd: string, env: Env, yaml: string) => {
      writeFileSync(join(cwd, "coworker.yaml"), yaml);
      return loadConfig({ env: { ...LOCAL, ...env }, cwd, argv: ["-c", "coworker.yaml"] });
    };
    const refusal = (result: ReturnType<typeof loadConfig>) => {
      if (result.ok) throw new Error("expected the stdio server to be refused");
      return result.problems.join("\n");
    };

    it("refuses a stdio server while data_dir lies inside the workspace, before either exists", () => {
      const cwd = project();
      const text = refusal(at(cwd, { COWORKER_WORKSPACE: "ws", COWORKER_DATA_DIR: "ws/data" }, STDIO));
      expect(text).toContain(
        `tools.mcp_servers (git): stdio MCP servers run in ${join(cwd, "ws", "data", "mcp-servers")}/<name>/, which lies inside the workspace (workspace.root: ${join(cwd, "ws")})`,
      );
      expect(text).toContain("Move data_dir (COWORKER_DATA_DIR) to a folder outside the workspace");
      // The data folder as the workspace itself is inside it too.
      expect(at(cwd, { COWORKER_WORKSPACE: "ws", COWORKER_DATA_DIR: "ws" }, STDIO).ok).toBe(false);
    });

    it("follows links: a data folder linked into the workspace, and an extra root", () => {
      const cwd = project();
      mkdirSync(join(cwd, "ws"));
      // A link to a folder that does not exist yet, inside the workspace.
      symlinkSync(join(cwd, "ws", "state"), join(cwd, "data-link"));
      expect(refusal(at(cwd, { COWORKER_WORKSPACE: "ws", COWORKER_DATA_DIR: "data-link" }, STDIO))).toContain(
        `run in ${join(cwd, "ws", "state", "mcp-servers")}/<name>/`,
      );
      // The workspace named through a link, the data folder through the real path.
      symlinkSync(join(cwd, "ws"), join(cwd, "ws-link"));
      expect(at(cwd, { COWORKER_WORKSPACE: "ws-link", COWORKER_DATA_DIR: "ws/data" }, STDIO).ok).toBe(false);
      const extra = `workspace:\n  extra_roots: [${join(cwd, "shared")}]\n${STDIO}`;
      expect(refusal(at(cwd, { COWORKER_DATA_DIR: "shared/coworker" }, extra))).toContain(
        `inside the workspace (workspace.extra_roots[0]: ${join(cwd, "shared")})`,
      );
    });

    it("lets stdio servers run from a data folder beside the workspace, and HTTP servers anywhere", () => {
      const cwd = project();
      expect(at(cwd, { COWORKER_WORKSPACE: "ws", COWORKER_DATA_DIR: "data" }, STDIO).ok).toBe(true);
      // A sibling whose name starts like the workspace's is not inside it.
      expect(at(cwd, { COWORKER_WORKSPACE: "ws", COWORKER_DATA_DIR: "ws-data" }, STDIO).ok).toBe(true);
      const httpOnly = `tools:\n  mcp_servers:\n${HTTP}`;
      expect(at(cwd, { COWORKER_WORKSPACE: "ws", COWORKER_DATA_DIR: "ws/data" }, httpOnly).ok).toBe(true);
      expect(
        refusal(at(cwd, { COWORKER_WORKSPACE: "ws", COWORKER_DATA_DIR: "ws/data" }, STDIO + HTTP)),
      ).toContain("tools.mcp_servers (git):");
    });

    it("refuses a stdio server whose HOME or a PATH folder lies inside the workspace, unless its env moves them", () => {
      // ~/.npmrc picks the registry npx installs from, and a PATH folder the npx it runs: a command
      // writing either in the workspace had the server run its code on the host.
      const cwd = project();
      const home = join(cwd, "ws", "home");
      const bin = join(cwd, "ws", "bin");
      const base = { COWORKER_WORKSPACE: "ws", COWORKER_DATA_DIR: "data" };
      expect(refusal(at(cwd, { ...base, HOME: home, PATH: "/usr/bin" }, STDIO))).toContain(
        `tools.mcp_servers.git: its HOME or PATH folders ${home} lie inside the workspace (workspace.root: ${join(cwd, "ws")})`,
      );
      expect(
        refusal(at(cwd, { ...base, HOME: "/home/bot", PATH: `/usr/bin:${bin}:relative` }, STDIO)),
      ).toContain(`its HOME or PATH folders ${bin} lie inside the workspace`);
      const moved = `tools:\n  mcp_servers:\n    git: { command: uvx, env: { HOME: /home/bot, PATH: /usr/bin } }\n`;
      expect(at(cwd, { ...base, HOME: home, PATH: bin }, moved).ok).toBe(true);
      const httpOnly = `tools:\n  mcp_servers:\n${HTTP}`;
      expect(at(cwd, { ...base, HOME: home, PATH: bin }, httpOnly).ok).toBe(true);
      expect(at(cwd, { ...base, HOME: "/home/bot", PATH: "/usr/bin" }, STDIO).ok).toBe(true);
    });

    it("start and doctor both refuse it with the same line", async () => {
      const cwd = project();
      writeFileSync(join(cwd, "coworker.yaml"), STDIO);
      const env = {
        ...LOCAL,
        COWORKER_CONFIG: "coworker.yaml",
        COWORKER_WORKSPACE: "ws",
        COWORKER_DATA_DIR: "ws/data",
      };
      const start = testIo(cwd, env);
      expect(await runCli(["start"], start.io)).toBe(1);
      expect(start.stderr()).toContain("tools.mcp_servers (git): stdio MCP servers run in");
      const doctor = testIo(cwd, env);
      expect(await runCli(["doctor"], doctor.io)).toBe(1);
      expect(doctor.stdout()).toContain("✗ configuration");
      expect(doctor.stdout()).toContain("tools.mcp_servers (git): stdio MCP servers run in");
    });
  });
});
