import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "coworker-config-"));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

function problemsOf(result: ReturnType<typeof loadConfig>): readonly string[] {
  if (result.ok) throw new Error("expected problems, got a valid config");
  return result.problems;
}

const GOOD = `
model:
  base_url: http://localhost:11434/v1
  name: llama3.1
  max_output_tokens: 2048
agent:
  mode: auto
  queue_mode: followup
  rules: "Answer in English."
workspace:
  root: ./ws
  extra_roots: [/srv/shared]
tools:
  allowed_commands: [npm test]
  mcp_servers:
    git: { command: uvx, args: [mcp-server-git] }
    docs: { url: "https://mcp.example.com/mcp", headers: { X-Team: core }, risk: read, trust_annotations: true }
telegram:
  allowed_users: [4567, 8910]
ops: { port: 0 }
`;

describe("loadConfig", () => {
  it("reads config/coworker.yaml, applies defaults and resolves paths against cwd", () => {
    const cwd = project({ "config/coworker.yaml": GOOD });
    const result = loadConfig({ env: {}, cwd });
    if (!result.ok) throw new Error(result.problems.join("\n"));
    const { config } = result;
    expect(result.source).toBe(join(cwd, "config/coworker.yaml"));
    expect(config.model).toEqual({
      base_url: "http://localhost:11434/v1",
      name: "llama3.1",
      choices: [],
      max_output_tokens: 2048,
      stall_timeout_s: 60,
      max_step_s: 1800,
      max_retries: 3,
      vision: "auto",
      vision_models: [],
    });
    expect(config.agent.mode).toBe("auto");
    expect(config.agent.queue_mode).toBe("followup");
    expect(config.agent.memory.enabled).toBe(true);
    expect(config.workspace).toEqual({ root: join(cwd, "ws"), extra_roots: ["/srv/shared"] });
    expect(config.data_dir).toBe(join(cwd, "data"));
    expect(config.tools.run_command).toEqual({
      default_timeout_s: 120,
      max_timeout_s: 600,
      output_max_chars: 30_000,
    });
    expect(config.tools.mcp_servers).toEqual({
      git: { transport: "stdio", command: "uvx", args: ["mcp-server-git"], env: {}, trustAnnotations: false },
      docs: {
        transport: "http",
        url: "https://mcp.example.com/mcp",
        headers: { "X-Team": "core" },
        risk: "read",
        trustAnnotations: true,
      },
    });
    expect(config.telegram.allowed_users).toEqual(["4567", "8910"]);
    expect(config.slack.http).toEqual({ port: 3000, path: "/slack/events" });
    expect(config.slack.file_max_bytes).toBe(20 * 1024 * 1024);
    expect(config.subscriptions.wake_rate_per_hour).toBe(12);
    expect(config.server).toEqual({ shutdown_grace_s: 20 });
    expect(config.ops).toEqual({ enabled: true, host: "127.0.0.1", port: 0, channel_down_grace_s: 300 });
    expect(Object.isFrozen(config.tools.mcp_servers)).toBe(true);
  });

  it("runs on defaults when there is no file", () => {
    const result = loadConfig({ env: {}, cwd: project({}) });
    expect(result.ok && result.source === undefined && result.config.model.name === "gpt-4o-mini").toBe(true);
  });

  it("reports every problem of a bad file at once, each with its path and a hint", () => {
    const cwd = project({
      "config/coworker.yaml": `
model:
  nmae: gpt-4o
  max_retries: many
agent:
  mode: autoo
port: 9000
tools:
  run_command: { default_timeout_s: 900 }
  mcp_servers:
    both: { command: x, url: "https://x.example" }
slack:
  http: { path: events }
`,
    });
    const problems = problemsOf(loadConfig({ env: {}, cwd }));
    expect(problems).toEqual([
      "model.max_retries: expected number, got text",
      'model.nmae: unknown key — did you mean "name"?',
      'agent.mode: must be one of interactive, auto, plan, discuss, reviewed (got "autoo") — did you mean "auto"?',
      "tools.run_command.default_timeout_s: default_timeout_s must not exceed max_timeout_s (got 900)",
      "tools.mcp_servers.both: set exactly one of `command` (stdio) or `url` (HTTP)",
      'slack.http.path: must start with / (got "events")',
      "port: unknown key — this key belongs under slack.http.port or telegram.webhook.port or ops.port",
    ]);
  });

  it("refuses a schedules total below the active limit, and a wake-up minimum above its maximum", () => {
    const cwd = project({
      "config/coworker.yaml":
        "schedules:\n  max_active_per_person: 20\n  max_tasks_per_person: 10\n  min_wake_s: 90000\n  max_wake_s: 3600\n",
    });
    expect(problemsOf(loadConfig({ env: {}, cwd }))).toEqual([
      "schedules.max_tasks_per_person: max_tasks_per_person (paused tasks included) must be at least max_active_per_person (got 10)",
      "schedules.min_wake_s: min_wake_s must not exceed max_wake_s (got 90000)",
    ]);
  });

  it("refuses a hard_deny pattern that is not a regular expression, which start would fail on after doctor passed it", () => {
    const cwd = project({
      "config/coworker.yaml": "tools:\n  hard_deny: ['terraform destroy', 'rm (-rf']\n",
    });
    expect(problemsOf(loadConfig({ env: {}, cwd }))).toEqual([
      'tools.hard_deny[1]: not a regular expression (Invalid regular expression: /rm (-rf/i: Unterminated group) (got "rm (-rf")',
    ]);
  });

  it("refuses risk: interactive for an MCP server, naming the risks it may have", () => {
    const cwd = project({
      "config/coworker.yaml": `tools:\n  mcp_servers:\n    db: { url: "https://mcp.example.com/mcp", risk: interactive }\n`,
    });
    expect(problemsOf(loadConfig({ env: {}, cwd }))).toEqual([
      'tools.mcp_servers.db.risk: must be one of read, write, exec, network, messaging (got "interactive")',
    ]);
  });

  it("refuses MCP server names whose tools could take another server's tool names, saying why", () => {
    const cwd = project({
      "config/coworker.yaml": `tools:
  mcp_servers:
    gh: { url: "https://a.example/mcp" }
    gh_: { url: "https://b.example/mcp" }
    my__gh: { url: "https://c.example/mcp" }
    ${"g".repeat(33)}: { url: "https://d.example/mcp" }
    "g h": { url: "https://e.example/mcp" }
`,
    });
    const because = "must not contain __ or end with _ (a tool's name is <server>__<tool>)";
    expect(problemsOf(loadConfig({ env: {}, cwd }))).toEqual([
      `tools.mcp_servers.gh_: ${because}`,
      `tools.mcp_servers.my__gh: ${because}`,
      `tools.mcp_servers.${"g".repeat(33)}: at most 32 characters`,
      "tools.mcp_servers.g h: use letters, digits, _ or -",
    ]);
  });

  it("lets the environment override the file, with lists split on commas", () => {
    const cwd = project({ "config/coworker.yaml": GOOD });
    const result = loadConfig({
      cwd,
      env: {
        COWORKER_MODE: "plan",
        COWORKER_MODEL: "qwen2.5",
        OPENAI_API_KEY: "sk-test-override-0000000000",
        TELEGRAM_ALLOWED_USERS: "1, 2,,3",
        COWORKER_APPROVERS: "slack:U1,telegram:2",
        COWORKER_DATA_DIR: "/var/lib/coworker",
        COWORKER_WORKSPACE: "./other",
        SLACK_BOT_TOKEN: "",
      },
    });
    if (!result.ok) throw new Error(result.problems.join("\n"));
    expect(result.config.agent.mode).toBe("plan");
    expect(result.config.model.name).toBe("qwen2.5");
    expect(result.config.model.api_key).toBe("sk-test-override-0000000000");
    expect(result.config.telegram.allowed_users).toEqual(["1", "2", "3"]);
    expect(result.config.approvals.approvers).toEqual(["slack:U1", "telegram:2"]);
    expect(result.config.data_dir).toBe("/var/lib/coworker");
    expect(result.config.workspace.root).toBe(join(cwd, "other"));
    expect(result.config.slack.bot_token).toBeUndefined();
  });

  it("names the variable behind a bad overridden value", () => {
    const problems = problemsOf(
      loadConfig({ env: { COWORKER_MODE: "yolo", OPENAI_BASE_URL: "localhost" }, cwd: project({}) }),
    );
    expect(problems).toContain(
      'agent.mode (from COWORKER_MODE): must be one of interactive, auto, plan, discuss, reviewed (got "yolo")',
    );
    expect(problems).toContain(
      'model.base_url (from OPENAI_BASE_URL): must be an http(s) URL (got "localhost")',
    );
  });

  it("reads .env beneath the real environment, and COWORKER_CONFIG or --config to pick the file", () => {
    const cwd = project({
      ".env": "COWORKER_MODEL=from-dotenv\nCOWORKER_MODE=discuss\nCOWORKER_CONFIG=elsewhere.yaml\n",
      "elsewhere.yaml": "agent: { max_steps: 7 }\n",
      "flag.yaml": "agent: { max_steps: 9 }\n",
    });
    const viaEnv = loadConfig({ env: { COWORKER_MODE: "auto" }, cwd });
    if (!viaEnv.ok) throw new Error(viaEnv.problems.join("\n"));
    expect(viaEnv.config.model.name).toBe("from-dotenv");
    expect(viaEnv.config.agent.mode).toBe("auto");
    expect(viaEnv.config.agent.max_steps).toBe(7);
    const viaFlag = loadConfig({ env: {}, cwd, argv: ["start", "--config", "flag.yaml"] });
    expect(viaFlag.ok && viaFlag.config.agent.max_steps).toBe(9);
    const missing = problemsOf(loadConfig({ env: {}, cwd, argv: ["--config=nope.yaml"] }));
    expect(missing[0]).toMatch(/^--config names .*nope\.yaml, which does not exist/);
  });

  it("never prints secret values, whatever is wrong with them", () => {
    const secrets = [
      "xoxb-1111111111-2222222222-abcdefABCDEF",
      "xapp-1-A0123-4444-abcdef0123456789",
      "sk-proj-abcdefghijklmnopqrstuvwxyz",
      "hunter2-is-my-password",
      "ghp_supersecretvalue0123456789",
      "my webhook secret!",
    ];
    const cwd = project({
      "config/coworker.yaml": `
model: { api_key: ["${secrets[2]}"] }
slack:
  bot_token: [${secrets[0]}]
  app_token: { value: "${secrets[1]}" }
store_url: [redis://:${secrets[3]}@cache:6379]
telegram:
  webhook: { url: "https://bot.example/tg", secret: "${secrets[5]}" }
tools:
  mcp_servers:
    gh: { command: gh-mcp, url: "https://x.example", env: { GH_TOKEN: ${secrets[4]} } }
`,
    });
    const problems = problemsOf(loadConfig({ env: {}, cwd }));
    expect(problems.length).toBeGreaterThanOrEqual(5);
    const text = `${problems.join("\n")}\n`;
    for (const secret of secrets) expect(text).not.toContain(secret);
    expect(text).toContain("slack.bot_token: expected string, got a list");
    expect(text).toContain(
      "telegram.webhook.secret: 16-256 characters: letters, digits, _ or - (a short one can be guessed; e.g. `openssl rand -hex 24`)\n",
    );

    const broken = project({ "config/coworker.yaml": `slack:\n  bot_token: "${secrets[0]}\n  x: [\n` });
    const yamlProblems = problemsOf(loadConfig({ env: {}, cwd: broken })).join("\n");
    expect(yamlProblems).toMatch(/line \d+, column \d+/);
    expect(yamlProblems).not.toContain(secrets[0]);
  });
});

describe("store_redis_prefix", () => {
  const REDIS = `${GOOD}store_url: redis://localhost:6379\n`;

  it("is unset by default, read from the file or COWORKER_STORE_REDIS_PREFIX", () => {
    const plain = loadConfig({ env: {}, cwd: project({ "config/coworker.yaml": GOOD }) });
    if (!plain.ok) throw new Error(plain.problems.join("\n"));
    expect(plain.config.store_redis_prefix).toBeUndefined();
    const cwd = project({ "config/coworker.yaml": `${REDIS}store_redis_prefix: team-a\n` });
    const fromFile = loadConfig({ env: {}, cwd });
    if (!fromFile.ok) throw new Error(fromFile.problems.join("\n"));
    expect(fromFile.config.store_redis_prefix).toBe("team-a");
    const fromEnv = loadConfig({ env: { COWORKER_STORE_REDIS_PREFIX: "team_b" }, cwd });
    if (!fromEnv.ok) throw new Error(fromEnv.problems.join("\n"));
    expect(fromEnv.config.store_redis_prefix).toBe("team_b");
    const tls = loadConfig({
      env: { COWORKER_STORE_URL: "rediss://redis.internal:6380", COWORKER_STORE_REDIS_PREFIX: "team_c" },
      cwd: project({ "config/coworker.yaml": GOOD }),
    });
    expect(tls.ok).toBe(true);
  });

  it.each(["team:a", "", "has space", "x".repeat(65), "ümlaut"])("refuses %j", (prefix) => {
    const cwd = project({
      "config/coworker.yaml": `${REDIS}store_redis_prefix: ${JSON.stringify(prefix)}\n`,
    });
    expect(problemsOf(loadConfig({ env: {}, cwd })).join("\n")).toMatch(/store_redis_prefix/);
  });

  it("is refused with a store that is not Redis, naming the key and the store in use", () => {
    const sqlite = project({ "config/coworker.yaml": `${GOOD}store_redis_prefix: team-a\n` });
    expect(problemsOf(loadConfig({ env: {}, cwd: sqlite }))).toEqual([
      `store_redis_prefix is set to "team-a", but the store in use is the embedded SQLite file (sqlite:${join(sqlite, "data", "coworker.sqlite")}: no store_url is set): the prefix applies to a Redis store only (redis://… or rediss://…) and would be ignored here. Unset store_redis_prefix, or point store_url (COWORKER_STORE_URL) at your Redis`,
    ]);

    const postgres = problemsOf(
      loadConfig({
        env: {
          COWORKER_STORE_URL: "postgres://coworker:hunter2@db.internal:5432/coworker",
          COWORKER_STORE_REDIS_PREFIX: "team-b",
        },
        cwd: project({ "config/coworker.yaml": GOOD }),
      }),
    ).join("\n");
    expect(postgres).toContain(
      'store_redis_prefix (COWORKER_STORE_REDIS_PREFIX) is set to "team-b", but the store in use is Postgres (store_url (COWORKER_STORE_URL): postgres://db.internal:5432/coworker)',
    );
    expect(postgres).not.toContain("hunter2");

    const memory = loadConfig({
      env: {},
      cwd: project({ "config/coworker.yaml": `${GOOD}store_url: "memory:"\nstore_redis_prefix: t\n` }),
    });
    expect(problemsOf(memory).join("\n")).toContain("the in-memory store (store_url: memory:)");
  });
});
