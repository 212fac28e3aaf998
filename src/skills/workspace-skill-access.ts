/**
 * The workspace's skill source (`.coworker/skills`), read as the service reads any workspace file
 * (service-file-access.ts). The service runs outside the sandbox while the agent's shell can
 * change anything in the workspace: `.coworker`, `skills`, a skill's folder or its SKILL.md may
 * become a link to a host file at any moment, also between a check and the read it allowed. So
 * every path is first confined to the workspace (where it really leads must lie inside; a link
 * within the workspace still works) and then opened by the anchored walk (anchored-fs.ts), one
 * component at a time relative to the folder before and following no link, so a swap after the
 * check is refused instead of followed. A scan confines and opens the source folder once, lists
 * it through that handle and opens each `<skill>/SKILL.md` relative to it, following no link:
 * that file's real path is the folder's plus those two names, confined as any other path. Only a
 * skill reached through a link (its folder or its SKILL.md) is confined on its own and walked to
 * from the workspace root (each skill was, and its SKILL.md opened again through /proc/self/fd:
 * some 17 file calls a skill where this makes 6, and a cold first turn with 200 skills took
 * 349–391 ms where it takes 217–254). A SKILL.md is stat'ed and read through the one handle it
 * was opened by, so the loader's cache judges the very file it would read — and only as much of
 * it as was judged: a file grown after its stat is read to the size the stat gave. Skills are the
 * whole workspace's, read for whichever conversation asks, so none of them is read from uploads/
 * (the files people send, each conversation's own): the source is the workspace as no conversation
 * sees it (conversation-paths.ts), and a skill folder, SKILL.md or file beside it that is or leads
 * into uploads/ is refused like one leading out of the workspace.
 */
import type { Dirent, Stats } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import path from "node:path";
import { isMissing } from "../core/missing-file.js";
import { isWithin } from "../core/real-paths.js";
import {
  type AnchoredDir,
  NotRegularFileError,
  openChecked,
  openCheckedDir,
  readUpTo,
} from "../tools/files/anchored-fs.js";
import { conversationPaths } from "../tools/files/conversation-paths.js";
import { credentialReasonFor } from "../tools/files/credential-paths.js";
import { readTextFile } from "../tools/files/text-file.js";
import {
  createWorkspacePaths,
  type ResolvedPath,
  type WorkspacePaths,
} from "../tools/files/workspace-paths.js";
import { filesIn, isLinkRefusal, type SkillFolder, type SkillSourceAccess } from "./skill-source-access.js";
import { SKILL_FILE } from "../core/workspace-layout.js";
import type { SkillSource } from "./skill.js";

/** A file held open with the stats of that open handle. */
interface OpenedFile {
  readonly handle: FileHandle;
  readonly stats: Stats;
}

/**
 * The SKILL.md of the folder `name`, opened relative to the open source folder `dir` without
 * following a link; undefined when the SKILL.md itself is a link, which is to be confined first.
 */
async function openInFolder(dir: AnchoredDir, name: string, shown: string): Promise<OpenedFile | undefined> {
  const folder = await dir.openDir(name, shown);
  try {
    return await folder.openFile(SKILL_FILE, shown);
  } catch (error) {
    if (isLinkRefusal(error)) return undefined;
    throw error;
  } finally {
    await folder.close();
  }
}

/** Run `use` on the opened SKILL.md, a regular file, reading no further than its stats; closes it. */
async function useSkillFile<T>(
  { handle, stats }: OpenedFile,
  shown: string,
  use: (stats: Stats, text: () => Promise<string>) => Promise<T>,
): Promise<T> {
  try {
    if (!stats.isFile()) throw new NotRegularFileError(`${shown} is not a regular file`);
    return await use(stats, async () => new TextDecoder("utf-8").decode(await readUpTo(handle, stats.size)));
  } finally {
    await handle.close();
  }
}

/** The workspace a skill source is confined to: its root, and the service's own files off limits inside it. */
interface SkillWorkspace {
  readonly root: string;
  readonly offLimits: readonly string[];
}

/** The workspace as no conversation sees it, with no conversation's uploads (module header). */
function sourcePaths(workspace: SkillWorkspace): WorkspacePaths {
  return conversationPaths(createWorkspacePaths(workspace), undefined);
}

/** A skill source folder as confined (`resolved.display`: its path as the workspace shows it), and held open. */
export interface OpenedSkillFolder {
  readonly resolved: ResolvedPath;
  readonly dir: AnchoredDir;
}

/** The source folder itself, confined through `paths` and held open by the anchored walk. */
async function openSourceFolder(paths: WorkspacePaths, source: SkillSource): Promise<OpenedSkillFolder> {
  const resolved = await paths.resolve(path.relative(paths.root, source.dir));
  return { resolved, dir: await openCheckedDir(resolved) };
}

/**
 * The workspace's skill source folder, confined to `workspace` and held open as every access here
 * holds it (module header); the caller closes it. Throws when it is refused or cannot be opened
 * (isMissing when it is not there).
 */
export function openWorkspaceSkillFolder(
  source: SkillSource,
  workspace: SkillWorkspace,
): Promise<OpenedSkillFolder> {
  return openSourceFolder(sourcePaths(workspace), source);
}

/**
 * The access to the workspace's skill source, confined to `workspace` and kept out of every
 * conversation's uploads (module header).
 */
export function workspaceSkillAccess(source: SkillSource, workspace: SkillWorkspace): SkillSourceAccess {
  const paths = sourcePaths(workspace);
  /** A path in the source folder, relative to the workspace root. */
  const inSource = (...names: string[]) => path.relative(paths.root, path.join(source.dir, ...names));
  const openFolder = async (relative: string): Promise<AnchoredDir> =>
    openCheckedDir(await paths.resolve(relative));
  /** The folder `resolved`, held open as `dir`, as a scan goes through it. */
  const scanned = async (resolved: ResolvedPath, dir: AnchoredDir): Promise<SkillFolder> => {
    const entries = await dir.entries();
    const hidden = await paths.hidden();
    /**
     * Whether a real path below the folder passes confinement as it is, with no link on its way:
     * neither the service's own files nor uploads/ (the source itself may be the uploads folder).
     */
    const confined = (absolute: string) =>
      !hidden(absolute) && credentialReasonFor(absolute, resolved.root) === undefined;
    return Object.freeze({
      entries,
      async isFolder(entry: Dirent): Promise<boolean> {
        if (entry.isDirectory()) return true;
        const folder = await openFolder(inSource(entry.name)).catch(() => undefined);
        await folder?.close();
        return folder !== undefined;
      },
      async withSkillFile<T>(
        entry: Dirent,
        use: (stats: Stats, text: () => Promise<string>) => Promise<T>,
      ): Promise<T | undefined> {
        const shown = path.join(resolved.display, entry.name, SKILL_FILE);
        let opened: OpenedFile | undefined;
        try {
          if (entry.isDirectory() && confined(path.join(resolved.absolute, entry.name, SKILL_FILE)))
            opened = await openInFolder(dir, entry.name, shown);
          opened ??= await openChecked(await paths.resolve(inSource(entry.name, SKILL_FILE)));
        } catch (error) {
          if (isMissing(error)) return undefined;
          throw error;
        }
        return useSkillFile(opened, shown, use);
      },
    });
  };
  return Object.freeze({
    async withFolder<T>(use: (folder: SkillFolder) => Promise<T>): Promise<T | undefined> {
      let opened: OpenedSkillFolder;
      try {
        opened = await openSourceFolder(paths, source);
      } catch (error) {
        if (isMissing(error)) return undefined;
        throw error;
      }
      const { resolved, dir } = opened;
      try {
        return await use(await scanned(resolved, dir));
      } finally {
        await dir.close();
      }
    },
    filesBeside(name: string): Promise<string[]> {
      return filesIn(() => openFolder(inSource(name)));
    },
    async readBeside(name: string, file: string, maxBytes: number): Promise<string> {
      const folder = await paths.resolve(inSource(name));
      const resolved = await paths.resolve(path.relative(paths.root, path.resolve(source.dir, name, file)));
      if (resolved.absolute === folder.absolute || !isWithin(resolved.absolute, folder.absolute))
        throw new Error(`"${file}" is not a file beside this skill`);
      return readTextFile(resolved, maxBytes);
    },
  });
}
