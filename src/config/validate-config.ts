/**
 * The rules that span several keys, run after the schema on every load — so `doctor` and `start`
 * (both through `loadConfig`) refuse the same configurations with the same words: a channel that
 * is half configured, a variable left empty where a value is required (OPENAI_API_KEY= from a
 * copied .env.example with nothing else pointing at a model), a workspace root that is the data
 * folder or lies inside it (data-dir-roots.ts), or stdio MCP servers that would run inside the
 * workspace (data_dir there) or take programs from it (their HOME or PATH there:
 * mcp-server-folders.ts), a store URL username, password or database name its client cannot
 * decode (store-url-escapes.ts), or a Redis key prefix for a store that is not Redis (it would be
 * ignored, and the operator would believe deployments are kept apart).
 */
import { describeStoreTarget, resolveStoreTarget, type StoreTarget } from "../store/store-url.js";
import { dataDirRootProblems } from "./data-dir-roots.js";
import { SERVICE_DIR } from "../core/service-dir.js";
import { serviceDirRootProblems } from "./service-dir-roots.js";
import { type Env, settingLabel } from "./env-overrides.js";
import { mcpServerFolderProblems, mcpServerLookupProblems } from "./mcp-server-folders.js";
import type { CoworkerConfig } from "./schema.js";
import { skillDirRootProblems } from "./skill-dir-roots.js";
import { storeUrlEscapeProblems } from "./store-url-escapes.js";

export interface ValidationContext {
  /** Dotted config path → the environment variable that set it. */
  readonly sources: ReadonlyMap<string, string>;
  /** Supported variables that are set but blank. */
  readonly empty: ReadonlySet<string>;
  /** The folder Coworker starts from, where `.env` and `config/coworker.yaml` are read. */
  readonly cwd: string;
  /** The environment the service runs with (stdio MCP servers get its HOME and PATH). */
  readonly env: Env;
}

function blank(context: ValidationContext, variable: string): string {
  return context.empty.has(variable) ? ` — ${variable} is set but empty` : "";
}

function modelProblems(config: CoworkerConfig, context: ValidationContext): string[] {
  const { model } = config;
  if (model.base_url !== undefined || model.api_key !== undefined) return [];
  if (!context.empty.has("OPENAI_API_KEY")) return [];
  return [
    "OPENAI_API_KEY is set but empty, and no OPENAI_BASE_URL is set: put your API key in " +
      "OPENAI_API_KEY, or set OPENAI_BASE_URL to a server that needs none (Ollama: http://localhost:11434/v1)",
  ];
}

function slackProblems(config: CoworkerConfig, context: ValidationContext): string[] {
  const { bot_token, app_token, signing_secret } = config.slack;
  if (bot_token !== undefined && app_token === undefined && signing_secret === undefined) {
    return [
      `${settingLabel("slack.bot_token", "SLACK_BOT_TOKEN")} is set, but Slack also needs ` +
        `${settingLabel("slack.app_token", "SLACK_APP_TOKEN")} for Socket Mode (xapp-…) or ` +
        `${settingLabel("slack.signing_secret", "SLACK_SIGNING_SECRET")} for HTTP events` +
        blank(context, "SLACK_APP_TOKEN"),
    ];
  }
  if (bot_token === undefined && (app_token !== undefined || signing_secret !== undefined)) {
    const other =
      app_token !== undefined
        ? settingLabel("slack.app_token", "SLACK_APP_TOKEN")
        : settingLabel("slack.signing_secret", "SLACK_SIGNING_SECRET");
    return [
      `${other} is set, but Slack also needs ${settingLabel("slack.bot_token", "SLACK_BOT_TOKEN")}: the ` +
        `Bot User OAuth Token (xoxb-…) under OAuth & Permissions${blank(context, "SLACK_BOT_TOKEN")}`,
    ];
  }
  return [];
}

const STORE_NAMES: Record<Exclude<StoreTarget["kind"], "redis">, string> = {
  sqlite: "the embedded SQLite file",
  postgres: "Postgres",
  memory: "the in-memory store",
};

/**
 * store_redis_prefix with a store that is not Redis: only the Redis store puts keys under a
 * prefix, so on SQLite, Postgres or memory it would be silently ignored — refused instead, naming
 * the key and the store in use. A store URL that cannot be read is left to the store's own error.
 */
function storePrefixProblems(config: CoworkerConfig, context: ValidationContext): string[] {
  const prefix = config.store_redis_prefix;
  if (prefix === undefined) return [];
  let target: StoreTarget;
  try {
    target = resolveStoreTarget(config.store_url, config.data_dir);
  } catch {
    return [];
  }
  if (target.kind === "redis") return [];
  const key = (path: string): string => settingLabel(path, context.sources.get(path));
  const store =
    config.store_url === undefined || config.store_url.trim() === ""
      ? `${STORE_NAMES[target.kind]} (${describeStoreTarget(target)}: no store_url is set)`
      : `${STORE_NAMES[target.kind]} (${key("store_url")}: ${describeStoreTarget(target)})`;
  return [
    `${key("store_redis_prefix")} is set to "${prefix}", but the store in use is ${store}: the ` +
      "prefix applies to a Redis store only (redis://… or rediss://…) and would be ignored here. " +
      "Unset store_redis_prefix, or point store_url (COWORKER_STORE_URL) at your Redis",
  ];
}

/** The store URL parts the store's client could not decode (store-url-escapes.ts), named without repeating them. */
function storeUrlProblems(config: CoworkerConfig, context: ValidationContext): string[] {
  const key = settingLabel("store_url", context.sources.get("store_url"));
  return storeUrlEscapeProblems(config.store_url).map(
    ({ part, problem }) => `the ${part} in ${key} ${problem}`,
  );
}

/**
 * Every cross-key problem of a config that passed the schema, its paths made absolute; empty when
 * it can run.
 */
export function crossKeyProblems(config: CoworkerConfig, context: ValidationContext): readonly string[] {
  return [
    ...modelProblems(config, context),
    ...slackProblems(config, context),
    ...dataDirRootProblems(config, context.sources),
    ...serviceDirRootProblems(config, context.sources, { serviceDir: SERVICE_DIR, cwd: context.cwd }),
    ...mcpServerFolderProblems(config),
    ...mcpServerLookupProblems(config, context.env),
    ...skillDirRootProblems(config),
    ...storeUrlProblems(config, context),
    ...storePrefixProblems(config, context),
  ];
}
