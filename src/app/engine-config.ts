/**
 * The engine factory's options that come from configuration: workspace roots, the user's standing
 * rules, the memory-saving setting, tool limits (with run_command's sandbox and resource limits),
 * allowed command prefixes and hard-deny patterns, and how images reach the model.
 * One mapping from config keys to factory options, so the application wires none of it by hand.
 */
import type { CoworkerConfig } from "../config/schema.js";
import type { ResourceLimits } from "../tools/shell/resource-limits.js";
import type { AppContext } from "./app-parts.js";
import type { EngineFactoryDeps } from "./engine-factory.js";

/** The config-derived part of EngineFactoryDeps. */
export type ConfigDerivedOptions = Pick<
  EngineFactoryDeps,
  | "workspaceRoot"
  | "extraRoots"
  | "offLimits"
  | "userRules"
  | "memoryEnabled"
  | "toolLimits"
  | "allowedCommandPrefixes"
  | "hardDenyPatterns"
  | "media"
>;

/**
 * Map a validated configuration to the factory's config-derived options; commands run in the app's
 * one sandbox, and the service's own files are off limits to the file tools.
 */
export function engineOptionsFromConfig(
  config: CoworkerConfig,
  app: Pick<AppContext, "shell" | "serviceFiles">,
): ConfigDerivedOptions {
  const { run_command: run, web_fetch: web } = config.tools;
  return {
    workspaceRoot: config.workspace.root,
    extraRoots: config.workspace.extra_roots,
    offLimits: app.serviceFiles,
    userRules: config.agent.rules,
    memoryEnabled: () => config.agent.memory.enabled,
    toolLimits: {
      runCommand: {
        defaultTimeoutS: run.default_timeout_s,
        maxTimeoutS: run.max_timeout_s,
        outputMaxChars: run.output_max_chars,
        sandbox: app.shell,
        limits: shellLimitsFromConfig(config.tools.shell.limits),
      },
      webFetch: { allowPrivate: web.allow_private, maxBytes: web.max_bytes, timeoutMs: web.timeout_s * 1000 },
      resultMaxChars: config.agent.tool_result_max_chars,
    },
    allowedCommandPrefixes: config.tools.allowed_commands,
    hardDenyPatterns: config.tools.hard_deny,
    media: {
      vision: config.model.vision,
      visionFamilies: config.model.vision_models,
      imageDetail: config.attachments.image_detail,
      imageMaxBytes: config.attachments.image_max_bytes,
      maxImagesPerCall: config.attachments.max_images_per_call,
      maxImageBytesPerCall: config.attachments.max_image_bytes_per_call,
    },
  };
}

/** tools.shell.limits as run_command's ResourceLimits. */
export function shellLimitsFromConfig(limits: CoworkerConfig["tools"]["shell"]["limits"]): ResourceLimits {
  return {
    cpuSeconds: limits.cpu_s,
    fileSizeMb: limits.file_size_mb,
    processes: limits.processes,
    memoryMb: limits.memory_mb,
    addressSpaceMb: limits.address_space_mb,
  };
}
