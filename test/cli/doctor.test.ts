import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runDoctor } from "../../src/cli/doctor.js";
import { runCli } from "../../src/cli/run-cli.js";
import { ALL_SCOPES, type FakePlatforms, GOOD, startFakePlatforms } from "./fake-platforms.js";
import { tempProject, testIo } from "./io.js";

let fake: FakePlatforms | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

function env(url: string, tokens: Partial<Record<keyof typeof GOOD, string>> = {}): Record<string, string> {
  const t = { ...GOOD, ...tokens };
  return {
    SLACK_API_URL: `${url}/api`,
    SLACK_BOT_TOKEN: t.slackBot,
    SLACK_APP_TOKEN: t.slackApp,
    TELEGRAM_API_ROOT: url,
    TELEGRAM_BOT_TOKEN: t.telegram,
    OPENAI_BASE_URL: `${url}/v1`,
    OPENAI_API_KEY: t.openai,
  };
}

async function doctor(environment: Record<string, string>, cwd = tempProject()) {
  const t = testIo(cwd, environment);
  const code = await runCli(["doctor"], t.io);
  return { code, out: t.stdout() };
}

describe("coworker doctor", () => {
  it("passes every check against healthy fakes, with the privacy-mode note", async () => {
    fake = await startFakePlatforms();
    const { code, out } = await doctor(env(fake.url));
    expect(out).toContain("✓ configuration: valid");
    expect(out).toContain(`✓ model endpoint: ${fake.url}/v1 serves gpt-4o-mini`);
    expect(out).toContain(
      "✓ Slack bot token: authenticated as @coworker in Acme (T0001); all 9 scopes granted",
    );
    expect(out).toContain("✓ Slack app token (Socket Mode): Socket Mode connection can be opened");
    expect(out).toContain("✓ Telegram bot token: bot @cowork_bot");
    expect(out).toContain("note: privacy mode is on");
    expect(out).toMatch(/✓ store: sqlite:.*coworker\.sqlite is writable/);
    expect(out).toContain("✓ workspace:");
    expect(out).toContain("All checks passed.");
    expect(out).not.toContain("✗");
    expect(code).toBe(0);
    expect(fake.requests).toEqual([
      "GET /v1/models",
      "POST /api/auth.test",
      "POST /api/apps.connections.open",
      "GET /bot<token>/getMe",
    ]);
  });

  it("fails with a fix for each wrong token, never printing a token", async () => {
    fake = await startFakePlatforms();
    const wrong = {
      slackBot: "xoxb-9999999999-8888888888-WrongWrongWr",
      slackApp: "xapp-1-A0009-7777777777-wrongwrongwr",
      telegram: "987654321:AAWrongTokenWrongTokenWrongToken99",
      openai: "sk-wrong-0123456789abcdefghij",
    };
    const { code, out } = await doctor(env(fake.url, wrong));
    expect(code).toBe(1);
    expect(out).toContain("✗ model endpoint: " + `${fake.url}/v1 rejected the API key (HTTP 401)`);
    expect(out).toContain("fix:  set a valid OPENAI_API_KEY for this endpoint");
    expect(out).toContain("✗ Slack bot token: token rejected (invalid_auth)");
    expect(out).toContain("fix:  copy the Bot User OAuth Token (xoxb-…)");
    expect(out).toContain("✗ Slack app token (Socket Mode): apps.connections.open failed (invalid_auth)");
    expect(out).toContain("✗ Telegram bot token: getMe failed (Unauthorized)");
    expect(out).toContain("fix:  get the bot's token from @BotFather");
    expect(out).toContain("4 checks failed.");
    for (const token of Object.values(wrong)) expect(out).not.toContain(token);
  });

  it("names missing Slack scopes and warns about an unlisted model without failing", async () => {
    fake = await startFakePlatforms({
      scopes: ALL_SCOPES.replace(",files:read", ""),
      models: ["llama3.1:8b"],
    });
    const { code, out } = await doctor(env(fake.url));
    expect(out).toContain(
      "✗ Slack bot token: authenticated as @coworker in Acme (T0001); missing scopes: files:read",
    );
    expect(out).toContain(
      "! model endpoint: " + `${fake.url}/v1 answered, but "gpt-4o-mini" is not in its list of 1 model(s)`,
    );
    expect(out).toContain("fix:  set COWORKER_MODEL to one of: llama3.1:8b");
    expect(code).toBe(1);
  });

  it("falls back to a one-token completion when the endpoint has no models list", async () => {
    fake = await startFakePlatforms({ models: "missing" });
    const { out } = await doctor({ OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: GOOD.openai });
    expect(out).toContain("✓ model endpoint: gpt-4o-mini answered a one-token completion");
    expect(fake.requests).toEqual(["GET /v1/models", "POST /v1/chat/completions"]);
  });

  it("reports an unreachable endpoint, a missing model config, skipped channels and a missing workspace", async () => {
    fake = await startFakePlatforms();
    const closedUrl = fake.url;
    await fake.close();
    fake = undefined;
    const unreachable = await doctor({ OPENAI_BASE_URL: `${closedUrl}/v1` });
    expect(unreachable.out).toContain(
      `✗ model endpoint: unreachable: cannot reach ${closedUrl}: ECONNREFUSED`,
    );
    expect(unreachable.out).toContain("– Slack bot token: not configured");
    expect(unreachable.out).toContain("– Telegram bot token: not configured");

    const none = await doctor({ COWORKER_WORKSPACE: "/nonexistent/coworker-ws" });
    expect(none.out).toContain("✗ model endpoint: not configured");
    expect(none.out).toContain("OPENAI_BASE_URL=http://localhost:11434/v1");
    // A missing root is what a fresh checkout has: start creates it, so it only warns.
    expect(none.out).toContain(
      "! workspace: /nonexistent/coworker-ws does not exist (coworker start creates it)",
    );
    expect(none.code).toBe(1);
  });

  it("fails a workspace start cannot use, without telling to create what exists", async () => {
    fake = await startFakePlatforms();
    const cwd = tempProject();
    const file = join(cwd, "a-file");
    writeFileSync(file, "");
    const shut = await doctor({ ...env(fake.url), COWORKER_WORKSPACE: file }, cwd);
    expect(shut.out).toContain(`✗ workspace: ${file} is not a directory`);
    expect(shut.out).toContain("may read and write: chown it, or run the container with --user");
    expect(shut.out).not.toMatch(/create (it|\/)/);
    expect(shut.code).toBe(1);

    const extra = join(cwd, "missing-extra");
    writeFileSync(join(cwd, "coworker.yaml"), `workspace: { extra_roots: [${extra}] }\n`);
    const missing = await doctor({ ...env(fake.url), COWORKER_CONFIG: "coworker.yaml" }, cwd);
    expect(missing.out).toContain(`✗ workspace: ${extra} does not exist`);
    expect(missing.out).toContain(`create ${extra} (mkdir -p)`);
    expect(missing.code).toBe(1);
  });

  it("warns when nobody may use the Telegram bot", async () => {
    fake = await startFakePlatforms();
    const nobody = await doctor(env(fake.url));
    expect(nobody.out).toContain(
      "! Telegram access: no allowed users or chats: the bot refuses everyone, and nobody can approve a pairing code",
    );
    expect(nobody.out).toContain("send /start to the bot");
    const cwd = tempProject();
    writeFileSync(join(cwd, "coworker.yaml"), "telegram: { allowed_chats: [-1001234567890] }\n");
    const chats = await doctor({ ...env(fake.url), COWORKER_CONFIG: "coworker.yaml" }, cwd);
    expect(chats.out).toContain("! Telegram access: no allowed users: only members of the 1 allowed chat(s)");
    const users = await doctor({ ...env(fake.url), TELEGRAM_ALLOWED_USERS: "4567,8910" });
    expect(users.out).toContain("✓ Telegram access: 2 allowed user(s)");
    expect(users.code).toBe(0);
  });

  it("warns when other users of the host may read the .env or config file holding the tokens", async () => {
    fake = await startFakePlatforms();
    const cwd = tempProject();
    const dotenv = join(cwd, ".env");
    writeFileSync(dotenv, `OPENAI_API_KEY=${GOOD.openai}\n`, { mode: 0o644 });
    chmodSync(dotenv, 0o644);
    const open = await doctor(env(fake.url), cwd);
    expect(open.out).toContain(
      `! configuration: valid (defaults + environment (no config file)), but other users of this host may read ${dotenv}`,
    );
    expect(open.out).toContain(`chmod 600 ${dotenv}`);
    chmodSync(dotenv, 0o600);
    expect((await doctor(env(fake.url), cwd)).out).toContain("✓ configuration: valid");
  });

  it("stops at an invalid config, listing its problems", async () => {
    const { code, out } = await doctor({ COWORKER_MODE: "yolo" });
    expect(code).toBe(1);
    expect(out).toContain("✗ configuration: 1 problem(s)");
    expect(out).toContain("note: agent.mode (from COWORKER_MODE): must be one of");
    expect(out).not.toContain("model endpoint");
  });

  it("turns a crashing or hanging check into a failure", async () => {
    const lines: string[] = [];
    const report = await runDoctor(
      [
        { name: "crashes", run: async () => Promise.reject(new Error("kaput")) },
        {
          name: "hangs",
          run: (signal) =>
            new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason))),
        },
        { name: "fine", run: async () => ({ status: "pass", summary: "ok" }) },
      ],
      { write: (text) => lines.push(text) },
      30,
    );
    expect(report.ok).toBe(false);
    expect(lines.slice(0, 3)).toEqual([
      "✗ crashes: check crashed: kaput\n",
      "✗ hangs: check crashed: no answer within 0.03 s\n",
      "✓ fine: ok\n",
    ]);
  });
});
