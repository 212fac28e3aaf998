/**
 * save_skill {name, description, instructions, files?}: write a skill into the workspace's
 * `.coworker/skills/<name>/`. It always asks a person first — in every mode, over any grant — on a
 * card that shows the whole skill (skill-save-card.ts), and it writes the very plan that card was
 * checked against (skill-save-plan.ts), so what is saved is what was approved; a call nobody may
 * approve (skill-authority.ts saveRefusal) saves nothing. The plan refuses what would not load,
 * files that break the bundling rules (skill-bundled-files.ts) and a skills folder or skill's
 * folder that is a link or a file (skill-save-target.ts); the tool, a plan whose card would be too
 * long to read whole (skill-save-card.ts cardSizeRefusal). The write puts the skill in place whole
 * or not at all, following no link (skill-save-write.ts). This module is the tool itself: its
 * arguments, the app's hooks, and the order of refusal, plan, card, write and result.
 */
import { z } from "zod";
import type { ConversationExecutionRequest } from "../core/request.js";
import { defineTool, fail, ok, type ToolPreview } from "../core/tool.js";
import type { Logger } from "../logging/logger.js";
import type { ConversationWorkspace } from "../tools/files/conversation-workspace.js";
import { bundledFileSchema, SAVED_FILES_MAX } from "./skill-bundled-files.js";
import { DESCRIPTION_MAX, type SkillDocument } from "./skill-file.js";
import type { SkillStanding } from "./skill-library.js";
import { cardSizeRefusal, previewOf, readStanding, savedText } from "./skill-save-card.js";
import { planSave, type SavePlan } from "./skill-save-plan.js";
import { writeSkill } from "./skill-save-write.js";
import { skillNameSchema } from "./skill-name.js";

const saveSkillSchema = z.object({
  name: skillNameSchema.describe("Lower-case letters, digits and hyphens, at most 64 characters"),
  description: z
    .string()
    .trim()
    .min(1)
    .max(DESCRIPTION_MAX)
    .describe("One or two sentences: what the skill does and when to use it (shown in the catalog)"),
  instructions: z.string().trim().min(1).describe("The Markdown body: the steps to follow"),
  files: z
    .array(bundledFileSchema)
    .max(SAVED_FILES_MAX)
    .optional()
    .describe("Files to bundle beside SKILL.md"),
});

/** What the app tells save_skill beyond its workspace. */
export interface SaveSkillHooks {
  /**
   * Why a skill may not be saved for `request` at all (no approver to decide it: skill-authority.ts
   * saveRefusal), undefined when it may ask. The card says so and the call saves nothing.
   */
  readonly refusal?: (request: ConversationExecutionRequest) => string | undefined;
  /** Hears every skill written (its SKILL.md as it loads), with the request that asked for it (before the call answers). */
  readonly onSaved?: (document: SkillDocument, request: ConversationExecutionRequest) => Promise<void> | void;
  /**
   * Where a skill of the name stands (SkillLibrary.standingOf): the card says when another source's
   * skill of the name would hide the saved one, and the result says whether the saved one is on.
   */
  readonly standing?: (name: string) => Promise<SkillStanding>;
  /** Hears a save's folder that could not be removed (left to the cleanup at the next start). */
  readonly logger?: Pick<Logger, "warn">;
}

/**
 * Build save_skill writing into `workspace` (bundled files are copied only from there), in the
 * asking conversation's view of it; see SaveSkillHooks for `hooks`.
 */
export function createSaveSkillTool(workspace: ConversationWorkspace, hooks: SaveSkillHooks = {}) {
  // The plan each preview was made from, so the run writes the very plan its check approved.
  const planned = new WeakMap<ToolPreview, SavePlan>();
  return defineTool({
    name: "save_skill",
    description:
      "Save reusable instructions as a skill in this workspace (.coworker/skills/<name>/SKILL.md), " +
      "so later conversations can load it. A person always reviews the whole skill before it is written; " +
      "saving under the name of an existing workspace skill replaces it (the card says so).",
    inputSchema: saveSkillSchema,
    category: "write",
    risk: "medium",
    concurrent: false,
    // The card shows the bundled files as they were: what is saved must be what was approved.
    bindsPreview: true,
    alwaysAsks: true,
    label: (args) => args.name,
    // The save works in the asking conversation's view of the workspace, as the file tools do: a file
    // copied in (`from`) is never read from another conversation's uploads.
    async preview(args, context) {
      const refusal = hooks.refusal?.(context.request);
      if (refusal !== undefined)
        return { summary: `Will not save the skill "${args.name}": ${refusal}`, fingerprint: refusal };
      const plan = await planSave(workspace.forRequest(context.request), args);
      // Too long to show whole: the card says why, and the call saves nothing (execute refuses it).
      const tooLong = cardSizeRefusal(plan);
      if (tooLong !== undefined)
        return { summary: `Will not save the skill "${args.name}": ${tooLong}`, fingerprint: tooLong };
      const preview = previewOf(plan, await readStanding(hooks.standing, args.name));
      planned.set(preview, plan);
      return preview;
    },
    async execute(args, context) {
      const refusal = hooks.refusal?.(context.request);
      if (refusal !== undefined) return fail(`The skill was not saved: ${refusal}`);
      const paths = workspace.forRequest(context.request);
      // An approved call was planned once more just before it runs, for the check that it still
      // saves what the card showed (the files may have changed since): that checked plan is the one
      // written. Only a call never checked (no card) plans here.
      let plan = context.checkedPreview && planned.get(context.checkedPreview);
      try {
        plan ??= await planSave(paths, args);
        const tooLong = cardSizeRefusal(plan);
        if (tooLong !== undefined) throw new Error(tooLong);
        await writeSkill(paths, plan, hooks.logger);
      } catch (error) {
        return fail(`The skill was not saved: ${error instanceof Error ? error.message : String(error)}`);
      }
      await hooks.onSaved?.(plan.document, context.request);
      const { text, written } = savedText(plan, await readStanding(hooks.standing, args.name));
      return ok(text, written);
    },
  });
}
