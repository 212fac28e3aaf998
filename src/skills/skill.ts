/**
 * Skill: one folder of reusable know-how in the format the agent ecosystem shares — a `SKILL.md`
 * with YAML front matter (`name`, `description`, optional `license`, `allowed-tools`, `metadata`)
 * and a Markdown body, plus any files beside it (listed when the skill is loaded, not per scan).
 * These are the frozen domain types the loader, catalog, tools and commands pass around (the name
 * rule every entry point validates is skill-name.ts). Wherever a description is listed it is put
 * on one line by core/one-line.ts clipLine, so it cannot start a line of its own there.
 */
import type { SkillDocument } from "./skill-file.js";

/** Where a skill was found: the team's workspace, this server's data dir, or a configured folder. */
export type SkillSourceKind = "workspace" | "data" | "configured";

/** One folder that holds skill folders. */
export interface SkillSource {
  readonly kind: SkillSourceKind;
  /** Absolute path of the folder holding `<name>/SKILL.md` folders. */
  readonly dir: string;
  /**
   * For a source the agent's commands can change (the workspace's): the workspace root. Everything
   * of it is read as the service reads any workspace file (workspace-skill-access.ts): confined to
   * this folder, and opened without following a link on the way.
   */
  readonly confinedTo?: string;
}

/** A parsed, valid skill. */
export interface Skill extends SkillDocument {
  /** Absolute path of the skill's folder. */
  readonly dir: string;
  readonly source: SkillSource;
}

/** A SKILL.md that could not be used, and why. */
export interface SkillProblem {
  /** Absolute path of the SKILL.md (or of the folder when it has none). */
  readonly file: string;
  readonly reason: string;
  readonly source: SkillSource;
}

/** The skill's place in a reply: "workspace", "data dir" or "skills.dirs". */
export function sourceLabel(kind: SkillSourceKind): string {
  return kind === "workspace" ? "workspace" : kind === "data" ? "data dir" : "skills.dirs";
}
