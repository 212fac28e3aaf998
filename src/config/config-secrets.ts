/**
 * The secrets a configuration holds, as values, and their registration with the redactor
 * (logging/redact.ts registerSecret), so every log line, error and notice has them taken out by
 * value — also the ones no token pattern knows: Slack's signing secret, the Telegram webhook
 * secret, a password in the store URL, MCP servers' credentials. Loading a configuration registers
 * nothing (load-config.ts has no side effects): the commands that run on one register its secrets
 * once, first (app/start-app.ts startApp, cli/doctor-command.ts); this is the one place API keys
 * are registered — the model, reviewer and transcription clients take theirs from this configuration
 * (OPENAI_API_KEY is loaded into model.api_key) and register nothing themselves. Every value of an MCP
 * server's `env` (stdio) or `headers` (http) counts as a secret, whatever its name: that is where an
 * operator hands a server its credentials, under names no rule can know (NOTION_KEY, STRIPE_KEY), and
 * a server's error output is logged. Values under 8 characters ("1", "true", "eu") are left out, as
 * registerSecret leaves out every short value: taking them out would mangle ordinary text.
 */
import { registerSecret } from "../logging/redact.js";
import type { CoworkerConfig } from "./schema.js";
import { storeUrlPassword } from "./store-url-escapes.js";

/** The configured secret values (blank ones left out). */
function secretsOf(config: CoworkerConfig): readonly string[] {
  const values = [
    config.model.api_key,
    config.reviewer.api_key,
    config.transcription?.api_key,
    config.slack.bot_token,
    config.slack.app_token,
    config.slack.signing_secret,
    config.telegram.bot_token,
    config.telegram.webhook?.secret,
    storeUrlPassword(config.store_url)?.password,
    ...Object.values(config.tools.mcp_servers).flatMap((server) =>
      Object.values(server.transport === "http" ? server.headers : server.env),
    ),
  ];
  return values.filter((value): value is string => value !== undefined && value.trim() !== "");
}

/** Hand the configured secret values to the redactor: nothing scrubbed from now on shows them. */
export function registerConfigSecrets(config: CoworkerConfig): void {
  for (const secret of secretsOf(config)) registerSecret(secret);
}
