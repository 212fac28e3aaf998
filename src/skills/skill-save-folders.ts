/**
 * How save_skill names the folders of a save under way, beside the skill's own: the staging folder
 * it writes the new skill in, and the aside folder it moves the old one to while it renames the
 * new one into place; how such a name is read back (parseSaveFolder, for the cleanup of the ones
 * a dead process left: skill-save-leftovers.ts); and how the loader tells, from a source's folder
 * names, which aside folder stands for its skill meanwhile. One place for every side, so the
 * writer (skill-save-write.ts) and the readers (skill-loader.ts, the cleanup) agree on the names.
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

/** A folder name of a save: its staging or aside folder, the skill's name and the save's tag. */
export interface SaveFolder {
  readonly kind: "staging" | "aside";
  readonly name: string;
  readonly tag: string;
}

/** What a folder name is as a save's folder (stagingSkillFolder, asideSkillFolder); undefined for any other. */
export function parseSaveFolder(folderName: string): SaveFolder | undefined {
  const [, name, kind, tag] = /^\.(.+)\.(saving|old)-([0-9a-f]{8})$/.exec(folderName) ?? [];
  if (name === undefined || tag === undefined || !skillNameSchema.safeParse(name).success) return undefined;
  return { kind: kind === "saving" ? "staging" : "aside", name, tag };
}

/**
 * The skill a folder moved aside by save_skill (asideSkillFolder) stands for while that save is
 * under way — its staging folder of the same tag is in `present`, the skill's own folder is not
 * (also the leftover of a save whose process died between its renames, until the cleanup at the
 * first scan puts it back: skill-save-leftovers.ts); undefined for any other name, or once that
 * save is over or was given up.
 */
export function asideSkillName(folderName: string, present: ReadonlySet<string>): string | undefined {
  const folder = parseSaveFolder(folderName);
  if (folder?.kind !== "aside") return undefined;
  const { name, tag } = folder;
  return present.has(stagingSkillFolder(name, tag)) && !present.has(name) ? name : undefined;
}
