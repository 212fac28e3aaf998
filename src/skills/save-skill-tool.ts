/**
 * save_skill {name, description, instructions, files?}: write a skill into the workspace's
 * `.coworker/skills/<name>/`. It always asks a person first — in every mode, over any grant — and
 * the card shows the whole SKILL.md and each bundled file; over an existing skill the card says
 * "Replace the existing skill", never just "Save", and under a name the data dir or `skills.dirs`
 * holds it says the saved skill will be hidden by that one; the result says whether the saved
 * skill is in the catalog, hidden or switched off (or that this cannot be read now: it is saved). Bundled files are given inline or copied from
 * the workspace (never from outside it); a copied file keeps its executable bit (the card says
 * so); what a bundled file's path and content must be is skill-bundled-files.ts. The skill's
 * folder is `<skills folder>/<name>` itself: a link there is refused, never followed. The folder
 * is written beside its destination and renamed into place, so a failed save
 * leaves no half-written skill; a replace that fails once the old folder is moved aside puts it
 * back (or, when that fails too, leaves the staging folder, beside which the loader serves it).
 * A folder is removed without following a link in it (AnchoredDir.removeDir); once the new skill
 * is in place the save is done, so a folder it then fails to remove is logged and left. What a
 * process that died mid-save left, and such folders, are cleaned up before the next library's
 * first scan (skill-save-leftovers.ts).
 */
import { randomBytes } from "node:crypto";
import { lstat, mkdir, rename } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { errorCode } from "../core/missing-file.js";
import { type AnchoredDir, openCheckedDir, writeChecked } from "../tools/files/anchored-fs.js";
import type { ConversationWorkspace } from "../tools/files/conversation-workspace.js";
import { contentFingerprint } from "../tools/files/content-fingerprint.js";
import { OversizedFileError, readTextAndStats } from "../tools/files/text-file.js";
import type { FileIdentity, WorkspacePaths } from "../tools/files/workspace-paths.js";
import { defineTool, fail, ok, type ToolPreview } from "../core/tool.js";
import type { ConversationExecutionRequest } from "../core/request.js";
import type { Logger } from "../logging/logger.js";
import { DESCRIPTION_MAX, parseSkillFile, renderSkillFile, type SkillDocument } from "./skill-file.js";
import { type SkillStanding, workspaceSkillsDir } from "./skill-library.js";
import { SKILL_FILE_MAX_BYTES } from "./skill-loader.js";
import {
  BundledPathCheck,
  bundledFileSchema,
  SAVED_FILE_MAX_BYTES,
  SAVED_FILES_MAX,
} from "./skill-bundled-files.js";
import { asideSkillFolder, stagingSkillFolder } from "./skill-save-folders.js";
import { sourceLabel } from "./skill.js";
import { SKILL_FILE } from "../core/workspace-layout.js";
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

type SaveSkillArgs = z.infer<typeof saveSkillSchema>;

interface SavePlan {
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

/** A file bundled with a saved skill; `executable` when copied from an executable file. */
interface BundledFile {
  readonly path: string;
  readonly content: string;
  readonly executable: boolean;
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

/**
 * The skill's folder, at `entry` (its name in the skills folder), looked at as a name there (never
 * followed): its identity, undefined when it is missing. A link, or anything but a folder, is
 * refused: a save works in `<skills folder>/<name>` itself, and moving aside and removing a link's
 * target would wipe whatever folder it points to. The plan looks by path; the write looks again
 * through the skills folder it holds open and saves only over the folder planned.
 */
async function skillFolderAt(entry: string, shown: string): Promise<FileIdentity | undefined> {
  const stats = await lstat(entry).catch((error: unknown) => {
    if (errorCode(error) === "ENOENT") return undefined;
    if (errorCode(error) === "ENOTDIR") throw notAFolder(path.dirname(shown));
    throw error;
  });
  if (stats === undefined) return undefined;
  if (stats.isSymbolicLink())
    throw new Error(
      `${shown} is a symbolic link, not a skill's folder; save_skill never writes through one (remove the link, or save under another name)`,
    );
  if (!stats.isDirectory())
    throw new Error(
      `${shown} is not a folder; save_skill will not replace it (remove it, or save under another name)`,
    );
  return { dev: stats.dev, ino: stats.ino };
}

/** The refusal of a skills folder that is a file (or has one on its way): no skill is saved in it. */
function notAFolder(shownSkills: string): Error {
  return new Error(
    `${shownSkills} is not a folder (it, or a folder on its way, is a file), so no skill can be saved in it; remove the file, or move it away`,
  );
}

async function planSave(paths: WorkspacePaths, args: SaveSkillArgs): Promise<SavePlan> {
  const skillFile = renderSkillFile({
    name: args.name,
    description: args.description,
    body: args.instructions,
  });
  const size = Buffer.byteLength(skillFile);
  if (size > SKILL_FILE_MAX_BYTES)
    throw new Error(
      `its ${SKILL_FILE} would be ${Math.ceil(size / 1024)} KB, over the ${SKILL_FILE_MAX_BYTES / 1024} KB a skill may have (move long material into bundled files)`,
    );
  const parsed = parseSkillFile(skillFile, args.name);
  if (!parsed.ok) throw new Error(`the skill would not load: ${parsed.reason}`);
  // Confined like a file tool's path: the agent's shell may have made .coworker/skills a link to
  // a folder outside the workspace, and this writes as the service, outside the sandbox.
  const skills = await paths.resolve(path.relative(paths.root, workspaceSkillsDir(paths.root)));
  const dir = path.join(skills.absolute, args.name);
  const shownDir = path.join(skills.display, args.name);
  const files: BundledFile[] = [];
  const check = new BundledPathCheck(dir, skills.root, shownDir);
  for (const file of args.files ?? []) {
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

/** The card of a save: the whole SKILL.md and every bundled file. */
function previewOf(args: SaveSkillArgs, plan: SavePlan, standing: ReadStanding): ToolPreview {
  const verb = plan.existing
    ? `Replace the existing skill "${args.name}"`
    : `Save the new skill "${args.name}"`;
  const sections = [`${plan.shownDir}/${SKILL_FILE}\n${plan.skillFile}`];
  for (const file of plan.files)
    sections.push(`${plan.shownDir}/${file.path}${file.executable ? " (executable)" : ""}\n${file.content}`);
  return {
    summary: `${verb} in ${plan.shownDir}/ (${plan.files.length + 1} file${plan.files.length === 0 ? "" : "s"})${hiddenNote(args.name, standing)}`,
    detail: { kind: "code", text: sections.join("\n\n") },
    fingerprint: fingerprintOf(plan),
  };
}

/** The fingerprint of exactly what a save writes, and where (ToolPreview.fingerprint). */
function fingerprintOf(plan: SavePlan): string {
  const files = plan.files.flatMap((file) => [file.path, file.executable ? 1 : 0, file.content]);
  return contentFingerprint(["save_skill", plan.dir, plan.existing ? 1 : 0, plan.skillFile, ...files]);
}

/**
 * The mode bits a bundled file is created with, less the umask (0o755 and 0o644 under the usual
 * 022): a script copied from an executable file is executable from its creation on, so no later
 * open of it by path sets the bits.
 */
const SCRIPT_MODE = 0o777;
const FILE_MODE = 0o666;

/**
 * Write the skill's folder beside its destination, then rename it into place. The skills folder
 * is confined and opened once (made when missing, each folder relative to the one above it), the staging folder made and opened relative to
 * it, and every file written relative to that open staging folder (writeChecked walks from its
 * handle), following no link; the renames name the skills folder by its handle. So a command of another session
 * swapping a folder for a link meanwhile cannot send a write or a rename out of the workspace.
 * Once the new folder is renamed into place the save is done: the staging or old folder it then
 * fails to remove is logged and left to the cleanup at the next start, never made a failed save;
 * so is the staging folder of a save that failed, whose own error is the one reported.
 */
async function writeSkill(
  paths: WorkspacePaths,
  plan: SavePlan,
  logger: Pick<Logger, "warn"> | undefined,
): Promise<void> {
  const tag = randomBytes(4).toString("hex");
  const name = plan.document.name;
  const skillsDir = path.dirname(plan.shownDir);
  const staging = stagingSkillFolder(name, tag);
  // SKILL.md goes last, so a staging folder with one holds every file of the skill.
  const writes = [
    ...plan.files.map((file) => ({ ...file, mode: file.executable ? SCRIPT_MODE : FILE_MODE })),
    { path: SKILL_FILE, content: plan.skillFile, mode: FILE_MODE },
  ];
  await mkdir(paths.root, { recursive: true });
  const parent = await openSkillsFolder(paths, skillsDir);
  /** Remove the save's `folder`, logging a failure (skill-save-leftovers.ts removes it at the next start). */
  const removeLeft = (folder: string) =>
    parent.removeDir(folder, path.join(skillsDir, folder)).catch((error: unknown) => {
      logger?.warn(
        { skill: name, folder: path.join(skillsDir, folder), err: error },
        "skills: save_skill could not remove its folder; the cleanup at the next start will",
      );
    });
  // Set when the old skill could not be put back: its aside folder is served only beside this staging folder.
  let keepStaging = false;
  try {
    // The skill's folder is the one planned, still no link: what the save replaces is that folder.
    const found = await skillFolderAt(parent.child(name), plan.shownDir);
    if (found?.dev !== plan.existing?.dev || found?.ino !== plan.existing?.ino)
      throw new Error(
        `${plan.shownDir} changed since the save was planned (another command made or replaced it)`,
      );
    try {
      const folder = await parent.openDir(staging, path.join(skillsDir, staging), true);
      try {
        for (const file of writes) {
          const display = path.join(skillsDir, staging, file.path);
          await writeChecked({ dir: folder, relative: file.path, display }, file.content, file.mode);
        }
      } finally {
        await folder.close();
      }
      if (plan.existing) {
        // Until the new folder is in place the loader reads the old one under its aside name (while
        // the staging folder of the same tag is there).
        const old = asideSkillFolder(name, tag);
        await rename(parent.child(name), parent.child(old));
        try {
          await rename(parent.child(staging), parent.child(name));
        } catch (error) {
          // The save failed: the old skill goes back under its name before the staging folder goes.
          await rename(parent.child(old), parent.child(name)).catch(() => {
            keepStaging = true;
          });
          throw error;
        }
        await removeLeft(old);
      } else await rename(parent.child(staging), parent.child(name));
    } finally {
      if (!keepStaging) await removeLeft(staging);
    }
  } finally {
    await parent.close();
  }
}

/** The skills folder `skillsDir`, confined, held open and made when missing; a file there is refused. */
async function openSkillsFolder(paths: WorkspacePaths, skillsDir: string): Promise<AnchoredDir> {
  try {
    return await openCheckedDir(await paths.resolve(skillsDir), { create: true });
  } catch (error) {
    if (errorCode(error) === "ENOTDIR") throw notAFolder(skillsDir);
    throw error;
  }
}

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

/** Where a skill stands, none when no hook asks, or "unknown" when it could not be read now. */
type ReadStanding = SkillStanding | { readonly kind: "unknown" } | undefined;

/**
 * Where the skill `name` stands, through `hooks`: a scan reads the switches from the store, and a
 * store out of reach must not make a written skill read as unsaved, nor break its card.
 */
async function readStanding(hooks: SaveSkillHooks, name: string): Promise<ReadStanding> {
  try {
    return await hooks.standing?.(name);
  } catch {
    return { kind: "unknown" };
  }
}

/** What the card adds when the saved skill would not be the one used, or that this is unknown. */
function hiddenNote(name: string, standing: ReadStanding): string {
  if (standing?.kind === "unknown")
    return " — whether another source's skill of the name would hide it could not be read now";
  return standing?.kind === "operator"
    ? ` — it will be hidden: the ${sourceLabel(standing.source)}'s skill "${name}" is the one listed and loaded`
    : "";
}

/** What the result says of the saved skill's place in the catalog. */
function standingText(name: string, standing: ReadStanding): string {
  switch (standing?.kind) {
    case undefined:
      return "It is in the catalog from the next turn.";
    case "unknown":
      return "It is saved; its place in the catalog could not be read now.";
    case "operator":
      return `It is hidden: the ${sourceLabel(standing.source)}'s skill "${name}" is the one listed and loaded, as long as that one is there.`;
    case "missing":
      return "It does not load (`coworker doctor` says why).";
    case "workspace":
      return standing.enabled
        ? "It is in the catalog from the next turn."
        : `It is switched off for this workspace: a configured approver turns it on with \`skills enable ${name}\`.`;
  }
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
      const preview = previewOf(args, plan, await readStanding(hooks, args.name));
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
      } catch (error) {
        return fail(`The skill was not saved: ${error instanceof Error ? error.message : String(error)}`);
      }
      try {
        await writeSkill(paths, plan, hooks.logger);
      } catch (error) {
        return fail(`The skill was not saved: ${error instanceof Error ? error.message : String(error)}`);
      }
      await hooks.onSaved?.(plan.document, context.request);
      const written = [
        `${plan.shownDir}/${SKILL_FILE}`,
        ...plan.files.map((file) => `${plan.shownDir}/${file.path}`),
      ];
      return ok(
        `${plan.existing ? "Replaced" : "Saved"} the skill "${args.name}" in ${plan.shownDir}/ (${written.length} file${written.length === 1 ? "" : "s"}). ${standingText(args.name, await readStanding(hooks, args.name))}`,
        written,
      );
    },
  });
}
