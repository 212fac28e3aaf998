/**
 * The doctor's skills check: scans the three skill sources (workspace `.coworker/skills`, the data
 * dir's `skills`, `skills.dirs`) and lists every skill found with its source, the ones a later
 * source shadows, and each malformed SKILL.md with its file and reason. Malformed skills warn
 * rather than fail: they are skipped at run time and never break a turn.
 */
import type { CoworkerConfig } from "../config/schema.js";
import { skillSources } from "../skills/skill-library.js";
import { SkillLoader } from "../skills/skill-loader.js";
import { sourceLabel } from "../skills/skill.js";
import type { DoctorCheck } from "./doctor.js";

/** The skills check for a valid config. */
export function skillsCheck(config: Pick<CoworkerConfig, "workspace" | "data_dir" | "skills">): DoctorCheck {
  return {
    name: "skills",
    async run() {
      const sources = skillSources(config.workspace.root, config.data_dir, config.skills.dirs);
      const scan = await new SkillLoader(sources).scan();
      const skills = [...scan.skills.values()].sort((a, b) => a.name.localeCompare(b.name));
      const notes = [
        ...skills.map((skill) => {
          const off =
            config.skills.disabled.includes(skill.name) ||
            (config.skills.enabled.length > 0 && !config.skills.enabled.includes(skill.name));
          return `${skill.name} (${sourceLabel(skill.source.kind)}${off ? ", disabled in config" : ""}): ${skill.dir}`;
        }),
        ...scan.shadowed.map((s) => `${s.name}: ${s.hidden} is shadowed by ${s.by}`),
        ...scan.problems.map((problem) => `malformed: ${problem.file} — ${problem.reason}`),
      ];
      const found = `${skills.length} skill${skills.length === 1 ? "" : "s"} in ${sources.map((s) => s.dir).join(", ")}`;
      if (scan.problems.length === 0) return { status: "pass", summary: found, notes };
      return {
        status: "warn",
        summary: `${found}; ${scan.problems.length} malformed (skipped)`,
        notes,
        fix: "fix each SKILL.md listed: YAML front matter with `name` (matching its folder) and `description`",
      };
    },
  };
}
