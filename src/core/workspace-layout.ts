/**
 * The names of the workspace files and folders Coworker itself reads, in one place: the skill
 * loader reads the team's skills from them, every session's instructions read AGENTS.md, and the
 * steering-file rule (tools/files/steering-files.ts) guards exactly these, so the three cannot
 * drift apart.
 */

/** Coworker's folder in the workspace. */
export const COWORKER_FOLDER = ".coworker";
/** The team's skills, inside COWORKER_FOLDER. */
export const SKILLS_FOLDER = "skills";
/** The file every skill folder holds. */
export const SKILL_FILE = "SKILL.md";
/** The workspace's instructions file at its root, read into every session. */
export const INSTRUCTIONS_FILE = "AGENTS.md";
