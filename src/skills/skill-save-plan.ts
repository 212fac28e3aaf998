/**
 * The plan of a save: exactly what save_skill will write and where, made before anything is
 * written — the SKILL.md rendered and parsed back as the loader will read it (within its size),
 * each bundled file's text and executable bit (given inline, or copied from the workspace, never
 * from outside it), and the skill's folder with what is there now. It is made once for the card and
 * once more just before an approved call runs, and the write writes that checked plan, so what is
 * saved is what the person approved (skill-save-card.ts fingerprints it). What a bundled file's
 * path and content must be is skill-bundled-files.ts; where a save may go is skill-save-target.ts.
 */
import path from "node:path";
import type { z } from "zod";
import { SKILL_FILE } from "../core/workspace-layout.js";
import { OversizedFileError, readTextAndStats } from "../tools/files/text-file.js";
import type { FileIdentity, WorkspacePaths } from "../tools/files/workspace-paths.js";
import { BundledPathCheck, type bundledFileSchema, SAVED_FILE_MAX_BYTES } from "./skill-bundled-files.js";
import { parseSkillFile, renderSkillFile, type SkillDocument } from "./skill-file.js";
import { workspaceSkillsDir } from "./skill-library.js";
import { SKILL_FILE_MAX_BYTES } from "./skill-loader.js";
import { skillFolderAt } from "./skill-save-target.js";

/** What a save is asked for: save_skill's arguments, as its schema checked them. */
export interface SaveRequest {
  readonly name: string;
  readonly description: string;
  readonly instructions: string;
  readonly files?: readonly z.infer<typeof bundledFileSchema>[] | undefined;
}

/** A file bundled with a saved skill; `executable` when copied from an executable file. */
interface BundledFile {
  readonly path: string;
  readonly content: string;
  readonly executable: boolean;
}

/** What a save writes, and where. */
export interface SavePlan {
  /** The skill's folder: `<skills folder>/<name>`, as named (never a link's target). */
  readonly dir: string;
  /**
   * The skill's folder as shown: the skills folder as shown (relative to the workspace root when
   * inside it), then `/<name>`. Its parent is the skills folder the write confines and opens again.
   */
  readonly shownDir: string;
  /** The skill's folder found there, when it is. */
  readonly existing: FileIdentity | undefined;
  readonly skillFile: string;
  /** The SKILL.md as it loads; its `name` is the skill's (and its folder's) name. */
  readonly document: SkillDocument;
  readonly files: readonly BundledFile[];
}

/**
 * Plan the save `request` asks for in the workspace of `paths`, or throw why it cannot be saved:
 * a SKILL.md that would be too big or would not load, a bundled file refused, a skills folder or
 * skill's folder that is a link or a file.
 */
export async function planSave(paths: WorkspacePaths, request: SaveRequest): Promise<SavePlan> {
  const skillFile = renderSkillFile({
    name: request.name,
    description: request.description,
    body: request.instructions,
  });
  const size = Buffer.byteLength(skillFile);
  if (size > SKILL_FILE_MAX_BYTES)
    throw new Error(
      `its ${SKILL_FILE} would be ${Math.ceil(size / 1024)} KB, over the ${SKILL_FILE_MAX_BYTES / 1024} KB a skill may have (move long material into bundled files)`,
    );
  const parsed = parseSkillFile(skillFile, request.name);
  if (!parsed.ok) throw new Error(`the skill would not load: ${parsed.reason}`);
  // Confined like a file tool's path: the agent's shell may have made .coworker/skills a link to
  // a folder outside the workspace, and this writes as the service, outside the sandbox.
  const skills = await paths.resolve(path.relative(paths.root, workspaceSkillsDir(paths.root)));
  const dir = path.join(skills.absolute, request.name);
  const shownDir = path.join(skills.display, request.name);
  const files: BundledFile[] = [];
  const check = new BundledPathCheck(dir, skills.root, shownDir);
  for (const file of request.files ?? []) {
    check.list(file.path);
    if (file.content !== undefined) files.push({ path: file.path, content: file.content, executable: false });
    else {
      files.push({ path: file.path, ...(await copiedFile(paths, file.from ?? "")) });
    }
  }
  check.refuseFolderClash();
  return {
    dir,
    shownDir,
    existing: await skillFolderAt(dir, shownDir),
    skillFile,
    document: parsed.document,
    files,
  };
}

/**
 * The text and executable bit of the workspace file `from`, both of the one file held open (by the
 * anchored walk: readTextAndStats), so they never come from two files swapped in between. A script
 * keeps its owner's x bit: `.coworker/` is read-only for commands, so none could set it.
 */
async function copiedFile(paths: WorkspacePaths, from: string): Promise<Omit<BundledFile, "path">> {
  try {
    const { text, stats } = await readTextAndStats(await paths.resolve(from), SAVED_FILE_MAX_BYTES);
    return { content: text, executable: (stats.mode & 0o100) !== 0 };
  } catch (error) {
    if (error instanceof OversizedFileError) throw new Error(oversizedAdvice(error));
    throw error;
  }
}

/**
 * What save_skill says of a copied file over SAVED_FILE_MAX_BYTES: the file tools' advice (read
 * it in parts) is no way to bundle it, so it says what may be bundled instead.
 */
function oversizedAdvice({ shown, size, limit }: OversizedFileError): string {
  return (
    `${shown} is ${Math.ceil(size / 1024)} KB, over the ${limit / 1024} KB a file bundled with a skill may have. ` +
    "Bundle only the part the skill needs (give it as `content`, or copy a smaller file), " +
    "or leave the file in the workspace and have the instructions name its path."
  );
}
