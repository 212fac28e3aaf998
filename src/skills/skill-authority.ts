/**
 * Who may save and switch skills. A skill steers every later session in every conversation, so as
 * for any such change (approvals/authorisation.ts steeringDecidersFor) only a global configured
 * approver of the platform (`approvals.approvers`) may turn one on or approve saving one — never a
 * channel's approvers, nor a DM's owner or a thread's starter. Without a configured approver
 * save_skill is refused outright (its card would otherwise go to the asker's own DM, letting anyone
 * who can write to the bot put a skill in every conversation), telling the operator what to set.
 * Switching a skill off is also open to the person who asked for it to be saved, while it is the
 * workspace skill they saved (SkillSavers).
 */
import {
  type ApprovalsConfig,
  mayDecide,
  noApproversConfigured,
  steeringDecidersFor,
} from "../approvals/authorisation.js";

/**
 * Who may switch skills and approve saving them: the approvals config's global approvers
 * (platform-qualified ids, "slack:U0123"); its per-channel approvers, if the config passed holds
 * them, are not asked.
 */
export type SkillApprovers = Pick<ApprovalsConfig, "approvers" | "unchecked">;

/** The global approvers of `platform` who decide skills (none: nobody may). */
function skillDeciders(approvers: SkillApprovers, platform: string): readonly string[] {
  return steeringDecidersFor(approvers, platform, []);
}

/** Whether the person may switch a skill on or off for the workspace (a global approver). */
export function maySwitch(approvers: SkillApprovers, platform: string, userId: string): boolean {
  return mayDecide(skillDeciders(approvers, platform), platform, userId);
}

/** Why save_skill may not save from `platform` (no approver there to decide it); undefined: it may ask. */
export function saveRefusal(approvers: SkillApprovers, platform: string): string | undefined {
  if (skillDeciders(approvers, platform).length > 0) return undefined;
  return `saving a skill puts it in every conversation's catalog, so a configured approver must approve it, and ${noApproversConfigured(platform)}`;
}
