/**
 * Support for the skills end-to-end tests: the app's skills wiring (openSkills on the process's
 * store, the real engine factory with their tools, context part and prompt framer, and their
 * commands in the SessionManager) as an extension of the Slack and Telegram harnesses, plus a
 * skill folder writer. The model is the subscriptions tests' puppet ("CALL <tool> <json>").
 */
import type { PermissionMode } from "../../src/core/modes.js";
import { createEngineFactory } from "../../src/app/engine-factory.js";
import type { ProviderClient } from "../../src/engine/provider/provider.js";
import { openSkills } from "../../src/skills/skills-runtime.js";
import type { SessionManagerOptions } from "../../src/sessions/session-manager.js";
import type { Store } from "../../src/store/store.js";
import type { ProcessExtension } from "../channels/slack/e2e-harness.js";
import type { StackExtension as TelegramExtension } from "../channels/telegram/stack.js";
import type { StackExtension } from "../support/session-stack.js";

/** The test skills' settings: no config switches, the default budget. */
const SETTINGS = { dirs: [], enabled: [], disabled: [], catalogBudgetTokens: 2_000 };

async function wired(
  store: Store,
  provider: ProviderClient,
  workspaceRoot: string,
  approvers: readonly string[],
  mode: PermissionMode,
) {
  const skills = await openSkills({
    serviceFiles: [],
    workspaceRoot,
    dataDir: workspaceRoot,
    settings: SETTINGS,
    space: store.space("skills"),
    approvers: { approvers },
  });
  const createEngine = createEngineFactory({
    provider,
    workspaceRoot,
    extraTools: () => skills.tools,
    contextParts: [skills.contextPart],
    framePrompt: skills.framePrompt,
  });
  const manager: Partial<SessionManagerOptions> = {
    extraCommands: skills.commands,
    defaults: { model: "fake-model", provider: "openai", mode, maxSteps: 10, queueMode: "steer" },
  };
  return { createEngine, manager, stopping: async () => skills.close() };
}

/** A stack with the app's skills, in `mode` (built again for every restart). */
function withSkills<C, O>(approvers: readonly string[], mode: PermissionMode): StackExtension<C, O> {
  return ({ store, provider, workspaceRoot }) => wired(store, provider, workspaceRoot, approvers, mode);
}

/** The Slack harness with the app's skills; the workspace is the data dir. */
export function slackSkills(
  approvers: readonly string[],
  mode: PermissionMode = "interactive",
): ProcessExtension {
  return withSkills(approvers, mode);
}

/** The Telegram stack with the app's skills. */
export function telegramSkills(approvers: readonly string[]): TelegramExtension {
  return withSkills(approvers, "interactive");
}
