/**
 * The session layer of `coworker start`, built from the validated config on the app's store: the
 * OpenAI-compatible provider (timed into Metrics), memories, MCP servers, the engine factory with
 * the config-derived tool options and the channels' Messengers, and the SessionManager with its
 * defaults, approvals, audit log and workspace, and channel subscriptions on the same store (their
 * tools in every session, wake-ups as turns of the subscribing sessions, `status` lines and
 * commands), the workspace's skills (their tools, per-turn catalog, direct runs, commands), and
 * scheduled tasks likewise (runs as wake turns of the tasks' sessions). Channels register on a metrics-observing wrapper of the manager, so every platform's
 * turns are counted.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { approvalsConfigSchema, type ApprovalsConfig } from "../approvals/authorisation.js";
import { mcpServersFolder } from "../config/mcp-server-folders.js";
import type { CoworkerConfig } from "../config/schema.js";
import { createEngineFactory } from "./engine-factory.js";
import { engineOptionsFromConfig } from "./engine-config.js";
import type { ProviderClient } from "../engine/provider/provider.js";
import { Reviewer } from "../engine/reviewer/reviewer.js";
import type { ReviewerGateOptions } from "../engine/reviewer/reviewer-gate.js";
import type { ReviewerModel } from "../engine/reviewer/reviewer-model.js";
import { reviewerMetrics } from "../ops/reviewer-metrics.js";
import { scheduleSettingsFromConfig } from "../schedules/schedule-settings.js";
import { settingsFromConfig } from "../subscriptions/subscription-settings.js";
import { openSkills, skillsSettingsFromConfig } from "../skills/skills-runtime.js";
import { McpManager } from "../tools/mcp/mcp-manager.js";
import { MemoryStore } from "../tools/memory/memory-store.js";
import { CONSOLE_PLATFORM } from "../core/console-platform.js";
import type { AppContext, AppConversation, ChannelStarter } from "./app-parts.js";
import { AppSchedules } from "./app-schedules.js";
import { AppSubscriptions } from "./app-subscriptions.js";
import { loadOnFirstUse } from "./load-on-first-use.js";
import type { WakeAccess } from "./wake-access.js";
import { MessengerRegistry } from "./messenger-registry.js";
import { observeService } from "./observed-service.js";
import { MeteredProvider } from "./provider-metrics.js";
import { mergeSessionHooks } from "./session-hooks.js";
import { createSessionManager } from "./session-layer.js";
import { planChannels } from "./channel-plan.js";

const HOUR_MS = 60 * 60 * 1000;

/** The name of the append-only audit log inside the data directory. */
export const AUDIT_LOG_FILE = "audit.jsonl";

/** What the conversation shares with the rest of the assembly. */
export interface ConversationParts {
  /** Where channel starters register their Messengers; default: a fresh (empty) registry. */
  readonly messengers?: MessengerRegistry;
  /** Channel subscriptions, shared with the channel starters; default: fresh ones. */
  readonly subscriptions?: AppSubscriptions;
  /** Scheduled tasks, shared with the channel starters; default: fresh ones. */
  readonly schedules?: AppSchedules;
  /** The platforms' access rules the channel starters register, checked before every wake-up. */
  readonly access?: WakeAccess;
  /**
   * The platform channels the app may start: with the console planned beside one of them, the
   * console's person decides for their own sessions only (approvalsOf). Default: none.
   */
  readonly platforms?: readonly ChannelStarter[];
}

/** Thrown when the approvals section holds ids the session layer cannot use. */
export class ApprovalsConfigError extends Error {
  override readonly name = "ApprovalsConfigError";
}

/** The SessionManager's approvals options from config; throws ApprovalsConfigError listing every problem. */
export function approvalsFromConfig(section: CoworkerConfig["approvals"]): ApprovalsConfig {
  const candidate = {
    approvers: section.approvers,
    perChannel: section.per_channel,
    ttlMs: Math.max(1, Math.round(section.expire_after_h * HOUR_MS)),
  };
  const parsed = approvalsConfigSchema.safeParse(candidate);
  if (parsed.success) return candidate;
  const problems = parsed.error.issues.map((issue) => {
    const [head, ...rest] = issue.path.map(String);
    const key = head === "perChannel" ? "per_channel" : head;
    return `approvals.${[key, ...rest].join(".")}: ${issue.message}`;
  });
  throw new ApprovalsConfigError(`Invalid approvals configuration — ${problems.join("; ")}`);
}

/**
 * The SessionManager's approvals options for `config` with these platform channels: the console,
 * which checks no one, is `unchecked` when it runs beside a platform (planChannels), so whoever
 * types there approves only their own console sessions' calls unless `approvals.approvers` names
 * them (console:local). Throws ApprovalsConfigError as approvalsFromConfig does.
 */
export function approvalsOf(config: CoworkerConfig, platforms: readonly ChannelStarter[]): ApprovalsConfig {
  const approvals = approvalsFromConfig(config.approvals);
  const planned = planChannels(config, platforms);
  const beside = planned.includes(CONSOLE_PLATFORM) && planned.length > 1;
  return beside ? { ...approvals, unchecked: [CONSOLE_PLATFORM] } : approvals;
}

/** Fill in config `model.max_output_tokens` on requests that do not set their own. */
function capOutputTokens(provider: ProviderClient, maxOutputTokens: number | undefined): ProviderClient {
  if (maxOutputTokens === undefined) return provider;
  return {
    stream: (request) =>
      provider.stream(request.maxOutputTokens === undefined ? { ...request, maxOutputTokens } : request),
  };
}

/** The model client from config, timed into the app's metrics; the OpenAI SDK loads with the first call. */
function createProvider(context: AppContext): ProviderClient {
  const { model } = context.config;
  const client = loadOnFirstUse(async () => {
    const { OpenAIProvider } = await import("../engine/provider/openai-provider.js");
    return new OpenAIProvider({
      ...(model.base_url !== undefined ? { baseURL: model.base_url } : {}),
      ...(model.api_key !== undefined ? { apiKey: model.api_key } : {}),
      stallTimeoutMs: model.stall_timeout_s * 1000,
      maxStepMs: model.max_step_s * 1000,
      maxRetries: model.max_retries,
      logger: context.logger.child({ component: "model" }),
    });
  });
  const openai: ProviderClient = {
    async *stream(request) {
      yield* (await client()).stream(request);
    },
  };
  return new MeteredProvider(capOutputTokens(openai, model.max_output_tokens), context.metrics);
}

/**
 * Where the safety reviewer's requests go, and with which key: its own endpoint and key, else the
 * main model's. The main model's key goes only to the main model's endpoint — a reviewer on
 * another host (reviewer.base_url) gets reviewer.api_key or no key at all, never the main one.
 */
export function reviewerEndpoint(config: Pick<CoworkerConfig, "model" | "reviewer">): {
  readonly baseURL: string | undefined;
  readonly apiKey: string | undefined;
} {
  const { model, reviewer } = config;
  const sameHost = reviewer.base_url === undefined || reviewer.base_url === model.base_url;
  return {
    baseURL: reviewer.base_url ?? model.base_url,
    apiKey: reviewer.api_key ?? (sameHost ? model.api_key : undefined),
  };
}

/**
 * The safety reviewer from config (its own model / endpoint, else the main model's), metered; its
 * OpenAI SDK client loads with its first review.
 */
function createReviewer(context: AppContext): ReviewerGateOptions {
  const { model, reviewer } = context.config;
  const { baseURL, apiKey } = reviewerEndpoint(context.config);
  const load = loadOnFirstUse(async () => {
    const { OpenAIReviewerModel } = await import("../engine/reviewer/reviewer-model.js");
    return new OpenAIReviewerModel({
      model: reviewer.model ?? model.name,
      ...(baseURL !== undefined ? { baseURL } : {}),
      ...(apiKey !== undefined ? { apiKey } : {}),
      maxOutputTokens: reviewer.max_output_tokens,
    });
  });
  const client: ReviewerModel = {
    complete: async (messages, signal) => (await load()).complete(messages, signal),
  };
  return {
    reviewer: new Reviewer({
      model: client,
      timeoutMs: reviewer.timeout_s * 1000,
      observe: reviewerMetrics(context.metrics.registry),
    }),
    shadow: reviewer.shadow,
  };
}

/**
 * Build the session layer on `context`. Resolves once the MCP servers have started (or failed
 * once — they keep retrying in the background); `start` must be called after the channels have
 * registered their outputs, so turns resumed from before a restart can reach their threads.
 */
export async function createConversation(
  context: AppContext,
  parts: ConversationParts = {},
): Promise<AppConversation> {
  const { config, logger, store } = context;
  const approvals = approvalsOf(config, parts.platforms ?? []);
  await mkdir(config.workspace.root, { recursive: true });
  const mcpLogger = logger.child({ component: "mcp" });
  const mcp = new McpManager({
    servers: config.tools.mcp_servers,
    onNotice: (message) => mcpLogger.info({ notice: true }, message),
    logger: mcpLogger,
    // In the data folder, hidden from the sandbox: never the workspace, which commands can write
    // (loadConfig refuses a data folder inside it while stdio servers are configured).
    serversFolder: mcpServersFolder(config.data_dir),
  });
  await mcp.start();
  try {
    const messengers = parts.messengers ?? new MessengerRegistry();
    const subscriptions = parts.subscriptions ?? new AppSubscriptions();
    const skills = await openSkills({
      workspaceRoot: config.workspace.root,
      dataDir: config.data_dir,
      settings: skillsSettingsFromConfig(config.skills),
      space: store.space("skills"),
      approvers: approvals,
      logger: logger.child({ component: "skills" }),
      serviceFiles: context.serviceFiles,
    });
    const schedules = parts.schedules ?? new AppSchedules();
    const createEngine = createEngineFactory({
      ...engineOptionsFromConfig(config, context),
      provider: createProvider(context),
      reviewer: createReviewer(context),
      memory: new MemoryStore(store.space("memory")),
      // Its approvers may change other members' channel memories.
      approvals,
      messengerFor: (platform) => messengers.messengerFor(platform),
      mcp,
      extraTools: () => [...subscriptions.tools, ...schedules.tools, ...skills.tools],
      contextParts: [skills.contextPart],
      framePrompt: skills.framePrompt,
    });
    const manager = createSessionManager({
      store,
      createEngine,
      defaults: {
        model: config.model.name,
        modelChoices: config.model.choices,
        provider: "openai",
        mode: config.agent.mode,
        maxSteps: config.agent.max_steps,
        queueMode: config.agent.queue_mode,
      },
      approvals,
      // A typed approve / deny decides only for someone who may act where its item was asked.
      ...(parts.access ? { mayActIn: parts.access.mayAct.bind(parts.access) } : {}),
      maxSessionsInMemory: config.sessions.max_in_memory,
      maxTurnsPerPerson: config.sessions.max_turns_per_person,
      workspace: { root: config.workspace.root, context: "" },
      auditLogPath: join(config.data_dir, AUDIT_LOG_FILE),
      logger,
      coordination: context.coordination,
      processId: context.processId,
      ...mergeSessionHooks(subscriptions.sessionOptions(), schedules.sessionOptions(), {
        extraCommands: skills.commands,
      }),
    });
    if (context.coordination.distributed)
      context.readiness.register("session leases", () => manager.coordinationReady());
    // Standing items wake turns only for people still allowed where they run (wake-access.ts).
    // Wake-ups held for a channel still connecting are let go (rejected) when the wakers stop.
    const wakesHeld = new AbortController();
    const wakes = parts.access ? parts.access.guard(manager, wakesHeld.signal) : manager;
    await subscriptions.open({
      store,
      sessions: wakes,
      settings: settingsFromConfig(config.subscriptions),
      approvers: approvals.approvers,
      logger,
      coordination: context.coordination,
      budget: context.budget,
    });
    await schedules.open({
      store,
      sessions: wakes,
      settings: scheduleSettingsFromConfig(config.schedules),
      approvers: approvals.approvers,
      logger,
      budget: context.budget,
    });
    return {
      service: observeService(manager, context.metrics),
      start: async () => {
        await manager.start();
        schedules.start();
      },
      drain: async (graceMs) => {
        wakesHeld.abort();
        await schedules.shutdown();
        await subscriptions.shutdown();
        return manager.drain(graceMs);
      },
      close: async () => {
        wakesHeld.abort();
        await schedules.shutdown();
        await subscriptions.shutdown();
        await mcp.close();
        skills.close();
      },
    };
  } catch (error) {
    await mcp.close();
    throw error;
  }
}
