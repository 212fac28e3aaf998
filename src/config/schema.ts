/**
 * The configuration schema: every section, key and default of config/coworker.yaml. Keys are
 * snake_case in YAML and in the parsed `CoworkerConfig` alike. Every object is strict, so an
 * unknown key (a typo) is an error rather than silently ignored.
 */
import { z } from "zod";
import type { ToolCategory } from "../core/events.js";
import { permissionModeSchema } from "../core/modes.js";
import { REDIS_KEY_PREFIX_PATTERN } from "../store/store-url.js";
import { attachmentsSchema, transcriptionSchema } from "./attachments-schema.js";
import {
  approverIds,
  perChannelApprovers,
  slackAppToken,
  slackBotIds,
  slackBotToken,
  slackChannelIds,
  slackUserIds,
  telegramBotToken,
  telegramChatIds,
  telegramUserIds,
} from "./platform-ids.js";
import {
  httpUrl,
  MB,
  mcpServerName,
  modelName,
  nonEmpty,
  nonNegativeInt,
  port,
  positiveInt,
  regexSource,
  timerSeconds,
  urlPath,
} from "./schema-fields.js";

const modelSchema = z.strictObject({
  base_url: httpUrl.optional(),
  api_key: nonEmpty.optional(),
  name: nonEmpty.default("gpt-4o-mini"),
  /** Other models anyone may switch a session to with `model <name>`; none: only a session's owner may pick another. */
  choices: z.array(modelName).default([]),
  stall_timeout_s: timerSeconds(positiveInt).default(60),
  /** The longest one model request may stream in all, however steadily (a dripping server is stopped). */
  max_step_s: timerSeconds(positiveInt).default(1800),
  max_retries: nonNegativeInt.default(3),
  max_output_tokens: positiveInt.optional(),
  /** Whether the model sees images: auto decides from the model name (env COWORKER_MODEL_VISION). */
  vision: z
    .union([z.boolean(), z.enum(["auto", "true", "false"])])
    .default("auto")
    .transform((value) => (value === "true" ? true : value === "false" ? false : value)),
  /** Extra model-name fragments counted as vision models when vision is auto. */
  vision_models: z.array(nonEmpty).default([]),
});

const agentSchema = z.strictObject({
  mode: permissionModeSchema.default("interactive"),
  max_steps: positiveInt.default(30),
  queue_mode: z.enum(["steer", "followup"]).default("steer"),
  rules: z.string().default(""),
  memory: z.strictObject({ enabled: z.boolean().default(true) }).prefault({}),
  tool_result_max_chars: positiveInt.default(20_000),
});

/** The safety reviewer of `reviewed` mode; model, endpoint and key default to the `model` section's. */
const reviewerSchema = z.strictObject({
  model: nonEmpty.optional(),
  base_url: httpUrl.optional(),
  api_key: nonEmpty.optional(),
  timeout_s: timerSeconds(z.number().positive()).default(20),
  max_output_tokens: positiveInt.default(200),
  /** In interactive mode, also record a background verdict for every approval card. */
  shadow: z.boolean().default(false),
});

const workspaceSchema = z.strictObject({
  root: nonEmpty.default("./workspace"),
  extra_roots: z.array(nonEmpty).default([]),
});

const runCommandSchema = z
  .strictObject({
    default_timeout_s: timerSeconds(positiveInt).default(120),
    max_timeout_s: timerSeconds(positiveInt).default(600),
    output_max_chars: positiveInt.default(30_000),
  })
  .refine((value) => value.default_timeout_s <= value.max_timeout_s, {
    message: "default_timeout_s must not exceed max_timeout_s",
    path: ["default_timeout_s"],
  });

/** tools.shell: the sandbox run_command runs in and its per-command resource limits. */
const shellSchema = z.strictObject({
  sandbox: z.enum(["bubblewrap", "off"]).default("bubblewrap"),
  network: z.boolean().default(false),
  limits: z
    .strictObject({
      cpu_s: positiveInt.default(600),
      file_size_mb: positiveInt.default(1024),
      processes: positiveInt.default(1024),
      memory_mb: positiveInt.default(1024),
      address_space_mb: positiveInt.default(8192),
    })
    .prefault({}),
});

const webFetchSchema = z.strictObject({
  allow_private: z.boolean().default(false),
  max_bytes: positiveInt.default(2_000_000),
  timeout_s: timerSeconds(positiveInt).default(20),
});

/**
 * The categories an MCP server's `risk` may give its tools. Not `interactive`: that is for the
 * built-in tools that only talk with the user, and it runs a tool without asking in every mode,
 * even on a turn channel content started.
 */
const MCP_RISKS = [
  "read",
  "write",
  "exec",
  "network",
  "messaging",
] as const satisfies readonly ToolCategory[];
export type McpRisk = (typeof MCP_RISKS)[number];

/** One MCP server as written in YAML: a stdio command or a remote URL, never both. */
const mcpServerInput = z
  .strictObject({
    command: nonEmpty.optional(),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional(),
    url: httpUrl.optional(),
    headers: z.record(z.string(), z.string()).optional(),
    risk: z.enum(MCP_RISKS).optional(),
    /** Believe the server's readOnlyHint / destructiveHint annotations (default false: they are ignored). */
    trust_annotations: z.boolean().default(false),
  })
  .superRefine((server, ctx) => {
    if ((server.command === undefined) === (server.url === undefined)) {
      ctx.addIssue({ code: "custom", message: "set exactly one of `command` (stdio) or `url` (HTTP)" });
    }
    if (server.url !== undefined && (server.args !== undefined || server.env !== undefined)) {
      ctx.addIssue({ code: "custom", message: "`args` and `env` apply only to a stdio `command` server" });
    }
    if (server.command !== undefined && server.headers !== undefined) {
      ctx.addIssue({ code: "custom", message: "`headers` apply only to a `url` server" });
    }
  });

/** A validated MCP server: stdio child process or streamable-HTTP endpoint. */
export type McpServerConfig =
  | {
      readonly transport: "stdio";
      readonly command: string;
      readonly args: readonly string[];
      readonly env: Readonly<Record<string, string>>;
      readonly risk?: McpRisk;
      /** Whether the server's tool annotations (readOnlyHint, …) decide categories. */
      readonly trustAnnotations?: boolean;
    }
  | {
      readonly transport: "http";
      readonly url: string;
      readonly headers: Readonly<Record<string, string>>;
      readonly risk?: McpRisk;
      /** Whether the server's tool annotations (readOnlyHint, …) decide categories. */
      readonly trustAnnotations?: boolean;
    };

const mcpServerSchema = mcpServerInput.transform((server): McpServerConfig => {
  const risk = {
    ...(server.risk === undefined ? {} : { risk: server.risk }),
    trustAnnotations: server.trust_annotations,
  };
  return server.url !== undefined
    ? { transport: "http", url: server.url, headers: server.headers ?? {}, ...risk }
    : {
        transport: "stdio",
        command: server.command ?? "",
        args: server.args ?? [],
        env: server.env ?? {},
        ...risk,
      };
});

const toolsSchema = z.strictObject({
  run_command: runCommandSchema.prefault({}),
  shell: shellSchema.prefault({}),
  allowed_commands: z.array(nonEmpty).default([]),
  hard_deny: z.array(regexSource).default([]),
  web_fetch: webFetchSchema.prefault({}),
  mcp_servers: z
    .record(mcpServerName, mcpServerSchema, {
      // Say what is wrong with a refused name, not only that it is refused.
      error: (issue) =>
        issue.code === "invalid_key" ? issue.issues.map((inner) => inner.message).join("; ") : undefined,
    })
    .default({}),
});

const approvalsSchema = z.strictObject({
  approvers: approverIds,
  per_channel: perChannelApprovers,
  expire_after_h: z.number().positive().default(24),
});

const slackSchema = z.strictObject({
  bot_token: slackBotToken.optional(),
  app_token: slackAppToken.optional(),
  signing_secret: nonEmpty.optional(),
  api_url: httpUrl.default("https://slack.com/api/"),
  http: z
    .strictObject({
      port: port.default(3000),
      path: urlPath.default("/slack/events"),
      /** Interface the events server listens on; all interfaces when unset (Slack must reach it). */
      host: nonEmpty.optional(),
    })
    .prefault({}),
  require_mention_in_threads: z.boolean().default(false),
  allowed_users: slackUserIds,
  allowed_channels: slackChannelIds,
  allowed_bots: slackBotIds,
  file_max_bytes: positiveInt.default(20 * MB),
  /** Serve events from other teams and enterprises (Slack Connect channels); refused by default. */
  allow_external: z.boolean().default(false),
  /** Serve the workspace's guests when allowed_users is empty; refused by default. */
  allow_guests: z.boolean().default(false),
});

const telegramSchema = z.strictObject({
  bot_token: telegramBotToken.optional(),
  api_root: httpUrl.default("https://api.telegram.org"),
  allowed_users: telegramUserIds,
  allowed_chats: telegramChatIds,
  webhook: z
    .strictObject({
      url: httpUrl,
      secret: z
        .string()
        .regex(
          /^[A-Za-z0-9_-]{16,256}$/,
          "16-256 characters: letters, digits, _ or - (a short one can be guessed; e.g. `openssl rand -hex 24`)",
        ),
      port: port.default(8443),
      path: urlPath.default("/telegram/webhook"),
      /** Interface the webhook server listens on; all interfaces when unset (a load balancer, a container). */
      host: nonEmpty.optional(),
    })
    .optional(),
  file_max_bytes: positiveInt.default(20 * MB),
});

const subscriptionsSchema = z.strictObject({
  buffer_max_messages: positiveInt.default(500),
  buffer_max_age_h: z.number().positive().default(168),
  debounce_s: timerSeconds(z.number().nonnegative()).default(8),
  max_batch: positiveInt.default(50),
  max_wait_s: timerSeconds(z.number().positive()).default(30),
  wake_rate_per_hour: positiveInt.default(12),
  /** Subscriptions one person may hold across all their conversations. */
  max_per_person: positiveInt.default(50),
});

const skillNameList = z.array(
  z.string().regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, "a skill name (lower-case, digits, -)"),
);

const skillsSchema = z.strictObject({
  dirs: z.array(nonEmpty).default([]),
  enabled: skillNameList.default([]),
  disabled: skillNameList.default([]),
  catalog_budget_tokens: positiveInt.default(2_000),
});

const schedulesSchema = z
  .strictObject({
    default_timezone: z
      .string()
      .min(1)
      .refine((zone) => {
        try {
          new Intl.DateTimeFormat("en-US", { timeZone: zone });
          return true;
        } catch {
          return false;
        }
      }, "an IANA timezone name, e.g. Europe/Berlin")
      .default("UTC"),
    catch_up_s: z.number().nonnegative().default(3_600),
    min_interval_s: z.number().positive().default(300),
    max_active_per_person: positiveInt.default(20),
    max_tasks_per_person: positiveInt.default(40),
    max_active_per_workspace: positiveInt.default(200),
    max_wake_s: z
      .number()
      .positive()
      .default(7 * 86_400),
    min_wake_s: z.number().positive().default(60),
    max_wake_chain: positiveInt.default(5),
    wakes_per_session_per_hour: positiveInt.default(10),
    max_failures: positiveInt.default(3),
  })
  .refine((value) => value.max_tasks_per_person >= value.max_active_per_person, {
    message: "max_tasks_per_person (paused tasks included) must be at least max_active_per_person",
    path: ["max_tasks_per_person"],
  })
  .refine((value) => value.min_wake_s <= value.max_wake_s, {
    message: "min_wake_s must not exceed max_wake_s",
    path: ["min_wake_s"],
  });

/** The whole configuration file. */
export const configSchema = z.strictObject({
  model: modelSchema.prefault({}),
  agent: agentSchema.prefault({}),
  reviewer: reviewerSchema.prefault({}),
  workspace: workspaceSchema.prefault({}),
  data_dir: nonEmpty.default("./data"),
  store_url: nonEmpty.optional(),
  /** Redis only: every key and pub/sub channel goes under `<prefix>:`, so deployments can share one Redis. */
  store_redis_prefix: z
    .string()
    .regex(REDIS_KEY_PREFIX_PATTERN, 'must be 1 to 64 letters, digits, "_" or "-"')
    .optional(),
  tools: toolsSchema.prefault({}),
  approvals: approvalsSchema.prefault({}),
  sessions: z
    .strictObject({
      max_in_memory: positiveInt.default(500),
      /** Turns one person may run at once (one per thread): the rest wait their turn. */
      max_turns_per_person: positiveInt.default(4),
    })
    .prefault({}),
  slack: slackSchema.prefault({}),
  telegram: telegramSchema.prefault({}),
  subscriptions: subscriptionsSchema.prefault({}),
  skills: skillsSchema.prefault({}),
  schedules: schedulesSchema.prefault({}),
  attachments: attachmentsSchema.prefault({}),
  transcription: transcriptionSchema.optional(),
  server: z
    .strictObject({
      shutdown_grace_s: timerSeconds(z.number().nonnegative()).default(20),
    })
    .prefault({}),
  /** The operations HTTP server (/healthz, /readyz, /metrics); port 0 picks any free port. */
  ops: z
    .strictObject({
      enabled: z.boolean().default(true),
      host: nonEmpty.default("127.0.0.1"),
      port: port.default(8080),
      /** /healthz fails once a configured channel has been down this long. */
      channel_down_grace_s: positiveInt.default(300),
    })
    .prefault({}),
  /**
   * The terminal chat, which has no access checks: "auto" runs it only when no platform is
   * configured; true also beside Slack / Telegram (start says it is unchecked); false never.
   */
  console: z
    .strictObject({ enabled: z.union([z.literal("auto"), z.boolean()]).default("auto") })
    .prefault({}),
  log: z
    .strictObject({
      level: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
    })
    .prefault({}),
});

/** Recursively readonly plain data. */
export type DeepReadonly<T> = T extends (infer E)[]
  ? readonly DeepReadonly<E>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

/** The validated, frozen configuration (paths already resolved to absolute by `loadConfig`). */
export type CoworkerConfig = DeepReadonly<z.output<typeof configSchema>>;
