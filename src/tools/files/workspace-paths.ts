/**
 * Workspace confinement: every path a tool touches resolves (realpath, following symlinks, also
 * for files that do not exist yet) inside the workspace root or one of the configured extra roots.
 * `..`, absolute paths elsewhere, symlinks pointing out and dangling symlinks whose target lies
 * outside are refused with an error naming the allowed roots; so are credential files, judged on
 * the resolved real path. The result carries the real root and the file's identity so the use
 * (anchored-fs.ts) can prove it touches what was checked.
 */
import { isMissing } from "../../core/missing-file.js";
import { isWithin, realPathAllowingMissing, TooManyLinksError } from "../../core/real-paths.js";
import { lstat } from "node:fs/promises";
import path from "node:path";
import { refuseCredentialPath } from "./credential-paths.js";

/** Where tools may read and write. */
export interface WorkspaceRootsOptions {
  /** The session's workspace (COWORKER_WORKSPACE); relative paths resolve against it. */
  readonly root: string;
  /** Further directories the configuration opens to the agent. */
  readonly extraRoots?: readonly string[];
  /**
   * The service's own files and folders (its data folder with every session's history and the
   * audit log, its config file…: hiddenServicePaths), never touched even inside a root. One that
   * holds a root (the folder Coworker runs in, with the workspace below it) is not applied.
   */
  readonly offLimits?: readonly string[];
}

/** dev + inode: which file a path named when it was checked. */
export interface FileIdentity {
  readonly dev: number;
  readonly ino: number;
}

/** A path that passed confinement. */
export interface ResolvedPath {
  /** Real absolute path (symlinks resolved). */
  readonly absolute: string;
  /** How to show it to the model and people: relative to the workspace root when inside it. */
  readonly display: string;
  /** Real path of the allowed root it lies in. */
  readonly root: string;
  /** Which file it was when checked; undefined when it did not exist yet. */
  readonly identity?: FileIdentity;
}

/** Thrown when a path leaves the allowed roots. */
export class PathOutsideWorkspaceError extends Error {
  override readonly name = "PathOutsideWorkspaceError";
}

/** Resolves tool paths against the workspace, refusing anything outside the allowed roots. */
export interface WorkspacePaths {
  /** The configured workspace root, as given (absolute). */
  readonly root: string;
  /** Real paths of the workspace root (first) and the extra roots. */
  realRoots(): Promise<readonly string[]>;
  /** Resolve a tool argument; throws PathOutsideWorkspaceError when it escapes. */
  resolve(input: string): Promise<ResolvedPath>;
  /** Display form of a resolved absolute path: relative inside the workspace root, else absolute. */
  display(absolute: string): Promise<string>;
  /**
   * A test of real paths that listings and searches leave out: the service's own files, and in
   * one conversation's view the other conversations' uploads (conversation-paths.ts).
   */
  hidden(): Promise<(absolute: string) => boolean>;
  /**
   * For a search of the real directory (or file) `dir`, worked out at once: hidden()'s test, and
   * the real paths strictly inside `dir` it hides, as far as they can be named ahead — the
   * service's own files and folders, and in one conversation's view the other conversations'
   * folders now under uploads/ — for the search engine to skip up front (ripgrep's exclusion
   * globs); the test stays the rule, applied to whatever is found.
   */
  hidingIn(dir: string): Promise<HidingIn>;
}

/** What a search of one directory leaves out (WorkspacePaths.hidingIn). */
export interface HidingIn {
  /** hidden()'s test of real paths. */
  readonly hidden: (absolute: string) => boolean;
  /** The real paths strictly inside the directory that `hidden` hides, as far as they can be named ahead. */
  readonly within: readonly string[];
}

/** Whether `absolute` is one of `offLimits` or lies inside one. */
function isOffLimits(absolute: string, offLimits: readonly string[]): boolean {
  return offLimits.some((entry) => isWithin(absolute, entry));
}

/**
 * The real path of `candidate` even when it does not exist (realPathAllowingMissing): the nearest
 * existing ancestor realpath'd and the missing tail appended, a dangling symlink followed to where
 * it points; a chain of too many links is refused as PathOutsideWorkspaceError.
 */
export async function realpathOfMaybeMissing(candidate: string): Promise<string> {
  return realPathAllowingMissing(candidate).catch((error: unknown) => {
    throw error instanceof TooManyLinksError ? new PathOutsideWorkspaceError(error.message) : error;
  });
}

/**
 * Confinement for one workspace root plus extra roots. The roots' real paths are computed once,
 * on first use, so building tools stays synchronous.
 */
export function createWorkspacePaths(options: WorkspaceRootsOptions): WorkspacePaths {
  const root = path.resolve(options.root);
  const configured = [root, ...(options.extraRoots ?? []).map((extra) => path.resolve(extra))];
  let realRoots: Promise<readonly string[]> | undefined;
  const getRoots = (): Promise<readonly string[]> => {
    realRoots ??= Promise.all(configured.map((dir) => realpathOfMaybeMissing(dir))).then((dirs) =>
      Object.freeze(dirs),
    );
    return realRoots;
  };

  let realOffLimits: Promise<readonly string[]> | undefined;
  const getOffLimits = (): Promise<readonly string[]> => {
    realOffLimits ??= Promise.all([
      getRoots(),
      ...(options.offLimits ?? []).map((entry) => realpathOfMaybeMissing(path.resolve(entry))),
    ]).then(([roots, ...entries]) =>
      Object.freeze(entries.filter((entry) => !roots.some((dir) => isWithin(dir, entry)))),
    );
    return realOffLimits;
  };

  const display = async (absolute: string): Promise<string> => {
    const workspaceRoot = (await getRoots())[0] as string;
    if (!isWithin(absolute, workspaceRoot)) return absolute;
    return path.relative(workspaceRoot, absolute) || ".";
  };

  return Object.freeze({
    root,
    realRoots: getRoots,
    display,
    async hidden() {
      const offLimits = await getOffLimits();
      return (absolute: string) => isOffLimits(absolute, offLimits);
    },
    async hidingIn(dir: string) {
      const offLimits = await getOffLimits();
      return {
        hidden: (absolute: string) => isOffLimits(absolute, offLimits),
        within: offLimits.filter((entry) => entry !== dir && isWithin(entry, dir)),
      };
    },
    async resolve(input: string): Promise<ResolvedPath> {
      if (input.trim() === "") throw new PathOutsideWorkspaceError("the path is empty");
      if (input.includes("\0")) throw new PathOutsideWorkspaceError("the path contains a NUL character");
      const roots = await getRoots();
      const lexical = path.resolve(roots[0] as string, input);
      const absolute = await realpathOfMaybeMissing(lexical);
      const root = roots.find((dir) => isWithin(absolute, dir));
      if (root === undefined) {
        const how = absolute === lexical ? "is" : `resolves to ${absolute}, which is`;
        throw new PathOutsideWorkspaceError(
          `path "${input}" ${how} outside the workspace; allowed roots: ${roots.join(", ")}`,
        );
      }
      const shown = await display(absolute);
      if (isOffLimits(absolute, await getOffLimits()))
        throw new PathOutsideWorkspaceError(
          `${shown} is Coworker's own data (its data folder or configuration), off limits to the file tools`,
        );
      refuseCredentialPath(absolute, root, shown);
      const stats = await lstat(absolute).catch((error: unknown) => {
        if (isMissing(error)) return undefined;
        throw error;
      });
      const identity = stats && { dev: stats.dev, ino: stats.ino };
      return Object.freeze({ absolute, display: shown, root, ...(identity ? { identity } : {}) });
    },
  });
}
