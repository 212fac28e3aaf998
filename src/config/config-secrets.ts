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
 * a server's error output is logged. A header value of a scheme and a credential (`Bearer abc…`,
 * `Basic dXNl…`, in an Authorization header or after such a scheme) also counts its credential
 * alone, and a Basic one its decoded password: a server refusing it echoes the token without the
 * scheme ("invalid token abc…"), which neither the whole value nor the Bearer pattern (a token with
 * a digit, + or =) takes out. A remote MCP server's URL
 * counts its password and its long path segments and query values (20 characters or more, and
 * random-looking as keys are, not words people also write elsewhere: keyShaped):
 * hosted servers put the account's key in the path (`/mcp/<key>/sse`), and a server's 404 page
 * ("Cannot POST /mcp/<key>/sse") reaches the log in the start failure. Values under 8 characters
 * ("1", "true", "eu") are left out, as registerSecret leaves out every short value: taking them
 * out would mangle ordinary text.
 */
import { registerSecret } from "../logging/redact.js";
import type { CoworkerConfig } from "./schema.js";
import { storeUrlPassword } from "./store-url-escapes.js";

/** Schemes that say the word after them is a credential, in a header of any name. */
const CREDENTIAL_SCHEMES = new Set(["bearer", "basic", "token", "bot"]);

/**
 * A header value, and for `<scheme> <credential>` the credential and a Basic one's password too —
 * in an Authorization header, or after a credential scheme: another header's two words
 * (`X-Team: Platform Engineering`) are no scheme and credential, and its last word alone, taken out
 * of every log line and notice, would mangle ordinary text.
 */
function headerSecrets(name: string, value: string): string[] {
  const match = /^\s*([A-Za-z][\w-]*)\s+(\S+)\s*$/.exec(value);
  const scheme = match?.[1]?.toLowerCase();
  const credential = match?.[2];
  if (scheme === undefined || credential === undefined) return [value];
  if (!/^(proxy-)?authorization$/i.test(name) && !CREDENTIAL_SCHEMES.has(scheme)) return [value];
  if (scheme !== "basic") return [value, credential];
  const decoded = Buffer.from(credential, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  return colon < 0 ? [value, credential] : [value, credential, decoded.slice(colon + 1)];
}

/**
 * Path segments and query values at least this long may be keys: ordinary ones (`mcp`, `v1`,
 * `sse`, `streamable-http`) are shorter, and one taken out of every log line would mangle it.
 */
const KEY_PART_CHARS = 20;

/**
 * Whether a long URL part looks drawn at random, as a key is: a run of 8 or more letters and digits
 * mixing both, or of 20 or more mixing cases. A long part of words (`company-knowledge-base`,
 * `model-context-protocol`) is a name people write elsewhere too, in messages and notices, where
 * taking it out as a secret would mangle them.
 */
function keyShaped(part: string): boolean {
  return (part.match(/[A-Za-z0-9]+/g) ?? []).some(
    (run) =>
      (run.length >= 8 && /[0-9]/.test(run) && /[A-Za-z]/.test(run)) ||
      (run.length >= KEY_PART_CHARS && /[a-z]/.test(run) && /[A-Z]/.test(run)),
  );
}

/**
 * The parts of a remote MCP server's URL that may be credentials: password, and path segments and
 * query values long and random-looking enough to be keys.
 */
function urlSecrets(url: string): string[] {
  const parsed = new URL(url);
  const key = (part: string) => part.length >= KEY_PART_CHARS && keyShaped(part);
  const parts = [...parsed.pathname.split("/"), ...parsed.searchParams.values()].filter(key);
  const decode = (part: string): string[] => {
    try {
      const decoded = decodeURIComponent(part);
      return decoded === part ? [part] : [part, decoded];
    } catch {
      return [part];
    }
  };
  return [parsed.password, ...parts].flatMap(decode);
}

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
      server.transport === "http"
        ? [
            ...Object.entries(server.headers).flatMap(([name, value]) => headerSecrets(name, value)),
            ...urlSecrets(server.url),
          ]
        : Object.values(server.env),
    ),
  ];
  return values.filter((value): value is string => value !== undefined && value.trim() !== "");
}

/** Hand the configured secret values to the redactor: nothing scrubbed from now on shows them. */
export function registerConfigSecrets(config: CoworkerConfig): void {
  for (const secret of secretsOf(config)) registerSecret(secret);
}
