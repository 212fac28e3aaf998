/**
 * `telegram.webhook.host` is the interface the webhook server listens on: read from the config
 * and handed to the channel; unset, the server listens on all interfaces as before.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { webhookOptions } from "../../src/app/telegram-starter.js";
import { loadConfig } from "../../src/config/load-config.js";

function project(yaml: string): string {
  const cwd = mkdtempSync(join(tmpdir(), "tg-webhook-config-"));
  mkdirSync(join(cwd, "config"));
  writeFileSync(join(cwd, "config/coworker.yaml"), yaml);
  return cwd;
}

const SECRET = "tg-webhook-Secret_0123456789";

describe("telegram.webhook.host", () => {
  it("is read from the config and handed to the channel", () => {
    const cwd = project(
      `telegram:\n  webhook: { url: "https://bot.example/tg", secret: ${SECRET}, host: 127.0.0.1 }\n`,
    );
    const loaded = loadConfig({ env: {}, cwd });
    if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
    const webhook = loaded.config.telegram.webhook;
    expect(webhook?.host).toBe("127.0.0.1");
    expect(webhookOptions(webhook!)).toEqual({
      url: "https://bot.example/tg",
      secret: SECRET,
      port: 8443,
      path: "/telegram/webhook",
      host: "127.0.0.1",
    });
  });

  it("is unset by default: all interfaces, as documented for a load balancer or a container", () => {
    const cwd = project(`telegram:\n  webhook: { url: "https://bot.example/tg", secret: ${SECRET} }\n`);
    const loaded = loadConfig({ env: {}, cwd });
    if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
    expect(webhookOptions(loaded.config.telegram.webhook!)).not.toHaveProperty("host");
  });
});
