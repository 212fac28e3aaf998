/**
 * Load the configuration: `.env` (real environment wins), the YAML file (`--config`, else
 * COWORKER_CONFIG, else config/coworker.yaml when present), environment overrides, then zod
 * validation (the schema, then the cross-key rules of validate-config.ts). Every problem is
 * collected and returned at once; nothing throws, nothing prints, nothing is registered: loading
 * has no side effects. `doctor` and `start` both load through here, so they accept and refuse the
 * same configurations; each then hands the loaded secrets to the redactor itself
 * (config-secrets.ts registerConfigSecrets).
 */
import { existsSync, readFileSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { parse as parseDotenv } from "dotenv";
import { LineCounter, parseDocument } from "yaml";
import { deepFreeze } from "../core/deep-freeze.js";
import { scrubSecrets } from "../logging/redact.js";
import { applyEnvOverrides, type Env } from "./env-overrides.js";
import { formatIssues } from "./format-errors.js";
import { type CoworkerConfig, configSchema } from "./schema.js";
import { crossKeyProblems } from "./validate-config.js";

export interface LoadConfigOptions {
  readonly env: Env;
  /** Directory relative paths (config file, .env, data_dir, workspace) are resolved against. */
  readonly cwd: string;
  /** CLI arguments; `--config <file>` / `-c <file>` selects the file. */
  readonly argv?: readonly string[];
}

export type LoadConfigResult =
  | {
      readonly ok: true;
      readonly config: CoworkerConfig;
      /** Absolute path of the file read, or undefined when running on defaults + environment. */
      readonly source: string | undefined;
      /** The files read (the config file, `.env`): where secrets may be kept. */
      readonly files: readonly string[];
    }
  | { readonly ok: false; readonly problems: readonly string[]; readonly source: string | undefined };

/** The variable naming the config file (read besides the overrides of env-overrides.ts). */
export const CONFIG_FILE_VARIABLE = "COWORKER_CONFIG";

/** The conventional file looked for when nothing else names one. */
export const DEFAULT_CONFIG_PATH = "config/coworker.yaml";

function configFlag(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    if (arg === "--config" || arg === "-c") return argv[i + 1];
    if (arg.startsWith("--config=")) return arg.slice("--config=".length);
  }
  return undefined;
}

/** The environment with `.env` values filled in beneath the real environment, and the `.env` read, if any. */
function environmentWithDotenv(env: Env, cwd: string): { readonly env: Env; readonly file?: string } {
  const file = resolve(cwd, ".env");
  if (!existsSync(file)) return { env };
  const fromFile = parseDotenv(readFileSync(file, "utf8"));
  const merged: Record<string, string | undefined> = { ...fromFile };
  for (const [key, value] of Object.entries(env)) if (value !== undefined) merged[key] = value;
  return { env: merged, file };
}

type FileChoice = { readonly path: string; readonly explicit: string } | { readonly path: undefined };

function chooseFile(env: Env, cwd: string, argv: readonly string[]): FileChoice {
  const flag = configFlag(argv);
  if (flag !== undefined) return { path: resolve(cwd, flag), explicit: "--config" };
  const fromEnv = env[CONFIG_FILE_VARIABLE]?.trim();
  if (fromEnv) return { path: resolve(cwd, fromEnv), explicit: CONFIG_FILE_VARIABLE };
  const conventional = resolve(cwd, DEFAULT_CONFIG_PATH);
  return existsSync(conventional)
    ? { path: conventional, explicit: DEFAULT_CONFIG_PATH }
    : { path: undefined };
}

type RawResult = { readonly raw: Record<string, unknown> } | { readonly problems: string[] };

function readYaml(path: string): RawResult {
  const lineCounter = new LineCounter();
  const document = parseDocument(readFileSync(path, "utf8"), { prettyErrors: false, lineCounter });
  if (document.errors.length > 0) {
    return {
      problems: document.errors.map((error) => {
        const at = lineCounter.linePos(error.pos[0]);
        const what = error.message.split("\n")[0] ?? error.code;
        return scrubSecrets(`${path} line ${at.line}, column ${at.col}: ${what} (YAML ${error.code})`);
      }),
    };
  }
  const data: unknown = document.toJS();
  if (data === null || data === undefined) return { raw: {} };
  if (typeof data !== "object" || Array.isArray(data)) {
    return {
      problems: [`${path}: the file must be a mapping of sections (model:, agent:, …), not ${typeof data}`],
    };
  }
  return { raw: data as Record<string, unknown> };
}

function resolvePaths(config: CoworkerConfig, cwd: string): CoworkerConfig {
  const absolute = (path: string): string => (isAbsolute(path) ? path : resolve(cwd, path));
  return {
    ...config,
    data_dir: absolute(config.data_dir),
    workspace: {
      root: absolute(config.workspace.root),
      extra_roots: config.workspace.extra_roots.map(absolute),
    },
    skills: { ...config.skills, dirs: config.skills.dirs.map(absolute) },
  };
}

/** Load, override and validate the configuration; returns every problem at once on failure. */
export function loadConfig(options: LoadConfigOptions): LoadConfigResult {
  const { env, file: dotenv } = environmentWithDotenv(options.env, options.cwd);
  const file = chooseFile(env, options.cwd, options.argv ?? []);
  let raw: Record<string, unknown> = {};
  if (file.path !== undefined) {
    if (!existsSync(file.path)) {
      return {
        ok: false,
        source: file.path,
        problems: [
          `${file.explicit} names ${file.path}, which does not exist — copy config/coworker.example.yaml there`,
        ],
      };
    }
    const read = readYaml(file.path);
    if ("problems" in read) return { ok: false, source: file.path, problems: read.problems };
    raw = read.raw;
  }
  const overridden = applyEnvOverrides(raw, env);
  const parsed = configSchema.safeParse(overridden.raw);
  if (!parsed.success) {
    const context = { schema: configSchema, raw: overridden.raw, sources: overridden.sources };
    return { ok: false, source: file.path, problems: formatIssues(parsed.error.issues, context) };
  }
  const config = resolvePaths(parsed.data, options.cwd);
  const problems = crossKeyProblems(config, { ...overridden, cwd: options.cwd, env });
  if (problems.length > 0) return { ok: false, source: file.path, problems: problems.map(scrubSecrets) };
  const files = [file.path, dotenv].filter((read): read is string => read !== undefined);
  return { ok: true, source: file.path, config: deepFreeze(config), files };
}
