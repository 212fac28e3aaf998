/**
 * How save_skill names the folders of a save under way, beside the skill's own: the staging folder
 * it writes the new skill in, and the aside folder it moves the old one to while it renames the
 * new one into place; and how the loader tells, from a source's folder names, which aside folder
 * stands for its skill meanwhile. One place for both sides, so the writer (save-skill-tool.ts) and
 * the reader (skill-loader.ts) agree on the names.
 */
import { skillNameSchema } from "./skill-name.js";

/** The folder save_skill writes a skill in, beside its destination, before renaming it into place. */
export function stagingSkillFolder(name: string, tag: string): string {
  return `.${name}.saving-${tag}`;
}

/** The folder a skill is moved aside to while save_skill renames its replacement into place. */
export function asideSkillFolder(name: string, tag: string): string {
  return `.${name}.old-${tag}`;
}

/**
 * The skill a folder moved aside by save_skill (asideSkillFolder) stands for while that save is
 * under way — its staging folder of the same tag is in `present`, the skill's own folder is not
 * (also the leftover of a save whose process died between its renames, told apart by nothing);
 * undefined for any other name, or once that save is over or was given up.
 */
export function asideSkillName(folderName: string, present: ReadonlySet<string>): string | undefined {
  const [, name, tag] = /^\.(.+)\.old-([0-9a-f]{8})$/.exec(folderName) ?? [];
  if (name === undefined || tag === undefined || !skillNameSchema.safeParse(name).success) return undefined;
  return present.has(stagingSkillFolder(name, tag)) && !present.has(name) ? name : undefined;
}
