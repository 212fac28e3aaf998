/**
 * The skill name rule: what a skill's folder and its `name` front matter may be called. Both ways a
 * skill comes in check a name with it (the SKILL.md parser and save_skill), so a name is always
 * one path segment that cannot climb out of its source folder.
 */
import { z } from "zod";

/** Longest skill name, in characters. */
const SKILL_NAME_MAX = 64;

/** Lower-case letters, digits and single hyphens, not starting or ending with a hyphen. */
export const skillNameSchema = z
  .string()
  .max(SKILL_NAME_MAX, `a skill name has at most ${SKILL_NAME_MAX} characters`)
  .regex(
    /^[a-z0-9]+(?:-[a-z0-9]+)*$/,
    "a skill name uses lower-case letters, digits and single hyphens (e.g. check-deploy)",
  );
