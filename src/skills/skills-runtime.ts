/**
 * The skills as the app wires them: one library per workspace (loader over the three sources,
 * switches persisted in the store's "skills" space) and what it contributes elsewhere — the
 * `load_skill` and `save_skill` tools for every session (save_skill refused where no approver is
 * configured, and who asked for each saved skill recorded: skill-authority.ts), the per-turn
 * context part (catalog and countermands), the prompt framer for a skill run directly, and the
 * `skills` / `skill` commands. Before the first scan, what saves interrupted by a dead process
 * left in the workspace's skills folder is completed or removed (skill-save-leftovers.ts).
 * A broken skill never breaks a turn: the loader reports and logs it instead of throwing, the
 * context part leaves the skills out if scanning fails outright (the rest of the context stays),
 * the engine uses the prompt as typed if framing fails, and `doctor` lists the details.
 */
import { qualifiedUserId } from "../approvals/authorisation.js";
import type { ConversationExecutionRequest } from "../core/request.js";
import type { FramedPrompt } from "../engine/turn-engine.js";
import type { ExtraCommand } from "../sessions/extra-commands.js";
import type { Logger } from "../logging/logger.js";
import type { KeyValueSpace } from "../store/store.js";
import { conversationWorkspace } from "../tools/files/conversation-workspace.js";
import { createWorkspacePaths } from "../tools/files/workspace-paths.js";
import type { AnyTool } from "../core/tool.js";
import { createLoadSkillTool } from "./load-skill-tool.js";
import { createSaveSkillTool } from "./save-skill-tool.js";
import { type SkillApprovers, saveRefusal } from "./skill-authority.js";
import { skillCommands } from "./skill-commands.js";
import { skillsContext } from "./skill-context.js";
import { SkillLibrary, skillSources } from "./skill-library.js";
import { SkillLoader } from "./skill-loader.js";
import { frameSkillRun } from "./skill-run.js";
import { clearSaveLeftovers } from "./skill-save-leftovers.js";
import { SkillSavers } from "./skill-savers.js";
import { SkillSwitches } from "./skill-switches.js";

/** The config's `skills` section, as the runtime takes it. */
export interface SkillsSettings {
  readonly dirs: readonly string[];
  readonly enabled: readonly string[];
  readonly disabled: readonly string[];
  readonly catalogBudgetTokens: number;
}

/** What the skills are opened with. */
export interface SkillsRuntimeOptions {
  readonly workspaceRoot: string;
  readonly dataDir: string;
  readonly settings: SkillsSettings;
  /** Where approvers' switches persist (the store's "skills" space); none: in memory only. */
  readonly space?: KeyValueSpace;
  readonly approvers: SkillApprovers;
  /** How long a scan is reused, in ms (default 1 s). */
  readonly scanIntervalMs?: number;
  /** Watch the skill folders between scans (default on; off: every scan opens every SKILL.md). */
  readonly watch?: boolean;
  /** Where a skill skipped as malformed or refused, or a stored switch that cannot be read, is logged. */
  readonly logger?: Pick<Logger, "warn">;
  /**
   * The service's own files (AppContext.serviceFiles): neither the workspace's skills nor
   * save_skill reach them, even where they lie inside the workspace.
   */
  readonly serviceFiles: readonly string[];
}

/** The wired skills (see the module header). */
export interface SkillsRuntime {
  readonly library: SkillLibrary;
  readonly tools: readonly AnyTool[];
  readonly commands: readonly ExtraCommand[];
  readonly contextPart: (request: ConversationExecutionRequest) => Promise<string | undefined>;
  readonly framePrompt: (request: ConversationExecutionRequest) => Promise<FramedPrompt | undefined>;
  /** Stop watching the skill folders. */
  close(): void;
}

/** The engine factory's settings from config's `skills` section. */
export function skillsSettingsFromConfig(section: {
  readonly dirs: readonly string[];
  readonly enabled: readonly string[];
  readonly disabled: readonly string[];
  readonly catalog_budget_tokens: number;
}): SkillsSettings {
  return {
    dirs: section.dirs,
    enabled: section.enabled,
    disabled: section.disabled,
    catalogBudgetTokens: section.catalog_budget_tokens,
  };
}

/** Open the workspace's skills: loads the persisted switches and wires the parts. */
export async function openSkills(options: SkillsRuntimeOptions): Promise<SkillsRuntime> {
  const { settings } = options;
  const switches = await SkillSwitches.open(
    { enabled: settings.enabled, disabled: settings.disabled },
    options.space,
    options.logger,
  );
  const offLimits = options.serviceFiles;
  const sources = skillSources(options.workspaceRoot, options.dataDir, settings.dirs);
  const loader = new SkillLoader(sources, {
    watch: options.watch ?? true,
    logger: options.logger,
    offLimits,
  });
  const library = new SkillLibrary({
    loader,
    switches,
    workspaceRoot: options.workspaceRoot,
    catalogBudgetTokens: settings.catalogBudgetTokens,
    scanIntervalMs: options.scanIntervalMs,
    beforeFirstScan: () => clearSaveLeftovers(sources, { offLimits, logger: options.logger }),
  });
  const savers = new SkillSavers(options.space);
  const workspace = conversationWorkspace(createWorkspacePaths({ root: options.workspaceRoot, offLimits }));
  return Object.freeze({
    library,
    tools: Object.freeze([
      createLoadSkillTool(library),
      createSaveSkillTool(workspace, {
        refusal: (request) => saveRefusal(options.approvers, request.platform),
        standing: (name) => library.standingOf(name),
        logger: options.logger,
        onSaved: async (document, request) => {
          library.invalidate();
          // The skill is written: a store that fails here only costs its saver the right to disable it.
          await savers
            .record(document, qualifiedUserId(request.platform, request.requester.userId))
            .catch((error: unknown) =>
              options.logger?.warn(
                { skill: document.name, err: error },
                "skills: could not record who saved a skill",
              ),
            );
        },
      }),
    ]),
    commands: skillCommands(library, options.approvers, savers),
    contextPart: (request: ConversationExecutionRequest) =>
      skillsContext(library, request).catch(() => undefined),
    framePrompt: (request: ConversationExecutionRequest) => frameSkillRun(library, request),
    close: () => loader.close(),
  });
}
