/**
 * The skills' thread commands: `skills` lists every skill (source, description, on/off) and
 * `skills enable|disable <name>` switches one for the workspace — only for a global configured
 * approver (`approvals.approvers`): the switch steers every later session in every conversation,
 * so a channel's approvers (`approvals.per_channel`) do not suffice (skill-authority.ts); the
 * person who asked for a skill to be saved may also switch it off while it is the workspace skill
 * they saved (skill-savers.ts); `skill <name> [text]` (a slash command: `/coworker skill …` on
 * Slack, `/skill …` on Telegram) runs a skill directly by queueing the person's message as
 * `skill <name> [text]`, which the engine then starts with the skill loaded. Typed in a thread,
 * `skill <name> …` is an ordinary message that the engine recognises the same way.
 */
import type { ExtraCommand, ExtraCommandCall } from "../sessions/extra-commands.js";
import { qualifiedUserId } from "../approvals/authorisation.js";
import { maySwitch, type SkillApprovers } from "./skill-authority.js";
import type { SkillLibrary } from "./skill-library.js";
import { skillRunText } from "./skill-run.js";
import { clipLine } from "../core/one-line.js";
import { type SkillSavers, savedSkillOf } from "./skill-savers.js";
import { skillNameSchema } from "./skill-name.js";
import { type Skill, sourceLabel } from "./skill.js";

const DESCRIPTION_SHOWN = 120;

function shortDescription(skill: Skill): string {
  return clipLine(skill.description, DESCRIPTION_SHOWN);
}

/** The `skills` listing: each skill with its state and source, and how many are malformed. */
export async function describeSkills(library: SkillLibrary): Promise<string> {
  const scan = await library.scan();
  const entries = library.entries(scan);
  const lines =
    entries.length === 0
      ? ["No skills are installed. Add a folder with a SKILL.md under .coworker/skills/ in the workspace."]
      : [
          `Skills (${entries.filter((entry) => entry.enabled).length} of ${entries.length} enabled):`,
          ...entries.map(
            ({ skill, enabled }) =>
              `• ${skill.name} — ${enabled ? "on" : "off"} · ${sourceLabel(skill.source.kind)} — ${shortDescription(skill)}`,
          ),
        ];
  for (const { name, hidden } of scan.shadowed) {
    const where = library.inWorkspace({ dir: hidden }) ? "The workspace's" : "Another";
    const winner = scan.skills.get(name);
    lines.push(
      `• ${name} — hidden: ${where} skill "${name}" is shadowed by the ${winner ? sourceLabel(winner.source.kind) : "later"} one`,
    );
  }
  if (scan.problems.length > 0)
    lines.push(
      `${scan.problems.length} malformed skill${scan.problems.length === 1 ? "" : "s"} skipped (\`coworker doctor\` lists the files and reasons).`,
    );
  lines.push("Run one: skill <name> [text] · global approvers: skills enable <name> / skills disable <name>");
  return lines.join("\n");
}

/** Who may switch skills: the global approvers, and for switching one off, whoever asked for it. */
interface SwitchAuthority {
  readonly approvers: SkillApprovers;
  readonly savers: SkillSavers;
}

async function switchSkill(
  library: SkillLibrary,
  authority: SwitchAuthority,
  call: ExtraCommandCall,
  enabled: boolean,
): Promise<string> {
  const name = call.args[1];
  const verb = enabled ? "enable" : "disable";
  if (name === undefined) return `Usage: skills ${verb} <name>`;
  const missing = `There is no skill named "${name}". \`skills\` lists them.`;
  if (!skillNameSchema.safeParse(name).success) return missing;
  const { platform } = call.target;
  const approver = maySwitch(authority.approvers, platform, call.user.id);
  // Asked only when the saver's record could decide, and read before the scan, so the skill the
  // record is checked against is the one switched.
  const savedBy = enabled || approver ? undefined : await authority.savers.savedBy(name);
  const entry = library.find(name, await library.scan());
  if (!entry) return missing;
  const may = approver || savedSkillOf(savedBy, qualifiedUserId(platform, call.user.id), entry);
  if (!may)
    return `Only a configured approver for the whole workspace (\`approvals.approvers\`) can ${verb} skills${enabled ? "" : " (and whoever asked for a workspace skill to be saved can disable it while it is the one they saved)"}: the switch applies to every conversation, so a channel's approvers (\`approvals.per_channel\`) cannot.`;
  if (entry.enabled === enabled) return `The skill "${name}" is already ${enabled ? "on" : "off"}.`;
  await library.switches.set(name, enabled);
  return `The skill "${name}" is now ${enabled ? "enabled" : "disabled"} for this workspace (from the next turn on).`;
}

/**
 * The `skills` and `skill` thread commands over the workspace's library; `savers` says who asked
 * for each saved skill.
 */
export function skillCommands(
  library: SkillLibrary,
  approvers: SkillApprovers,
  savers: SkillSavers,
): readonly ExtraCommand[] {
  return Object.freeze([
    {
      name: "skills",
      usage:
        "skills — list skills · skills enable <name> / skills disable <name> — switch one (global approvers)",
      minArgs: 0,
      maxArgs: 2,
      run: async (call) => {
        const sub = call.args[0]?.toLowerCase();
        if (sub === undefined) return describeSkills(library);
        if (sub === "enable" || sub === "disable")
          return switchSkill(library, { approvers, savers }, call, sub === "enable");
        return "Usage: skills | skills enable <name> | skills disable <name>";
      },
    },
    {
      name: "skill",
      usage: "skill <name> [text] — run a skill directly with the text as the request",
      minArgs: 1,
      maxArgs: Number.POSITIVE_INFINITY,
      slashOnly: true,
      run: async (call) => {
        const [name = "", ...rest] = call.args;
        const entry = library.find(name, await library.scan());
        if (!entry) return `There is no skill named "${name}". \`skills\` lists them.`;
        if (!entry.enabled) return `The skill "${name}" is disabled for this workspace.`;
        const status = await call.startTurn(skillRunText(name, rest.join(" ")));
        return status === "started"
          ? `Running the skill "${name}".`
          : `Running the skill "${name}" after the current turn.`;
      },
    },
  ]);
}
