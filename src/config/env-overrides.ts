/**
 * Environment overrides: each supported variable replaces one config path in the raw YAML object
 * before validation, so overridden values are validated like file values. Empty variables are
 * ignored (a blank line in .env does not wipe a file value), but reported, so validation can name
 * a variable that was left empty where a value is required.
 */

type EnvKind = "string" | "list" | "boolean" | "integer";

interface EnvOverride {
  readonly env: string;
  readonly path: readonly string[];
  readonly kind: EnvKind;
}

/** Every supported environment variable and the config path it sets. */
export const ENV_OVERRIDES: readonly EnvOverride[] = [
  { env: "OPENAI_API_KEY", path: ["model", "api_key"], kind: "string" },
  { env: "OPENAI_BASE_URL", path: ["model", "base_url"], kind: "string" },
  { env: "COWORKER_MODEL", path: ["model", "name"], kind: "string" },
  { env: "SLACK_BOT_TOKEN", path: ["slack", "bot_token"], kind: "string" },
  { env: "SLACK_APP_TOKEN", path: ["slack", "app_token"], kind: "string" },
  { env: "SLACK_SIGNING_SECRET", path: ["slack", "signing_secret"], kind: "string" },
  { env: "SLACK_API_URL", path: ["slack", "api_url"], kind: "string" },
  { env: "TELEGRAM_BOT_TOKEN", path: ["telegram", "bot_token"], kind: "string" },
  { env: "TELEGRAM_API_ROOT", path: ["telegram", "api_root"], kind: "string" },
  { env: "TELEGRAM_ALLOWED_USERS", path: ["telegram", "allowed_users"], kind: "list" },
  { env: "COWORKER_APPROVERS", path: ["approvals", "approvers"], kind: "list" },
  { env: "COWORKER_DATA_DIR", path: ["data_dir"], kind: "string" },
  { env: "COWORKER_WORKSPACE", path: ["workspace", "root"], kind: "string" },
  { env: "COWORKER_STORE_URL", path: ["store_url"], kind: "string" },
  { env: "COWORKER_STORE_REDIS_PREFIX", path: ["store_redis_prefix"], kind: "string" },
  { env: "COWORKER_MODE", path: ["agent", "mode"], kind: "string" },
  { env: "COWORKER_REVIEWER_MODEL", path: ["reviewer", "model"], kind: "string" },
  { env: "COWORKER_REVIEWER_BASE_URL", path: ["reviewer", "base_url"], kind: "string" },
  { env: "COWORKER_REVIEWER_API_KEY", path: ["reviewer", "api_key"], kind: "string" },
  { env: "COWORKER_DEFAULT_TIMEZONE", path: ["schedules", "default_timezone"], kind: "string" },
  { env: "COWORKER_SHELL_SANDBOX", path: ["tools", "shell", "sandbox"], kind: "string" },
  { env: "COWORKER_SHELL_NETWORK", path: ["tools", "shell", "network"], kind: "boolean" },
  { env: "COWORKER_OPS_PORT", path: ["ops", "port"], kind: "integer" },
  { env: "COWORKER_MODEL_VISION", path: ["model", "vision"], kind: "string" },
  { env: "COWORKER_TRANSCRIPTION_MODEL", path: ["transcription", "model"], kind: "string" },
  { env: "COWORKER_TRANSCRIPTION_BASE_URL", path: ["transcription", "base_url"], kind: "string" },
  { env: "COWORKER_TRANSCRIPTION_API_KEY", path: ["transcription", "api_key"], kind: "string" },
];

/**
 * How a message names a setting: the config key, then the environment variable behind it when
 * there is one to name — `slack.bot_token (SLACK_BOT_TOKEN)`, `data_dir`. (Schema errors say
 * `key (from VAR)`: the same order.)
 */
export function settingLabel(path: string, variable: string | undefined): string {
  return variable === undefined ? path : `${path} (${variable})`;
}

export type Env = Readonly<Record<string, string | undefined>>;

export interface AppliedOverrides {
  /** The raw config with overrides applied (a copy; the input is untouched). */
  readonly raw: Record<string, unknown>;
  /** Dotted config path → the variable that set it, to say where a bad value came from. */
  readonly sources: ReadonlyMap<string, string>;
  /** Supported variables that are set but blank (ignored above). */
  readonly empty: ReadonlySet<string>;
}

/** 1/true/yes/on and 0/false/no/off; anything else stays a string so validation names it. */
function parseBoolean(value: string): boolean | string {
  if (/^(?:1|true|yes|on)$/i.test(value)) return true;
  if (/^(?:0|false|no|off)$/i.test(value)) return false;
  return value;
}

function parseValue(kind: EnvKind, value: string): unknown {
  if (kind === "string") return value.trim();
  if (kind === "boolean") return parseBoolean(value.trim());
  // A non-number stays text, so validation reports "expected number" naming the variable.
  if (kind === "integer") return /^\s*-?\d+\s*$/.test(value) ? Number(value) : value.trim();
  return value
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Set `path` in a structured copy of `raw`, creating missing sections. A section that exists but
 * is not a mapping is left alone: validation reports it.
 */
function setPath(root: Record<string, unknown>, path: readonly string[], value: unknown): boolean {
  let node = root;
  for (const key of path.slice(0, -1)) {
    const next = node[key] ?? {};
    if (!isPlainObject(next)) return false;
    node[key] = next;
    node = next;
  }
  const last = path[path.length - 1];
  if (last === undefined) return false;
  node[last] = value;
  return true;
}

/** Apply every non-empty supported variable of `env` to a copy of the raw config. */
export function applyEnvOverrides(raw: Record<string, unknown>, env: Env): AppliedOverrides {
  const copy = structuredClone(raw);
  const sources = new Map<string, string>();
  const empty = new Set<string>();
  for (const override of ENV_OVERRIDES) {
    const value = env[override.env];
    if (value === undefined) continue;
    if (value.trim() === "") {
      empty.add(override.env);
      continue;
    }
    if (setPath(copy, override.path, parseValue(override.kind, value))) {
      sources.set(override.path.join("."), override.env);
    }
  }
  return { raw: copy, sources, empty };
}
