/**
 * Swap- and link-resistant file access for the file tools. A path that passed confinement is
 * used by walking down from its real root one component at a time, each directory opened with
 * O_NOFOLLOW and the next name opened *relative to that open directory* (Linux: through
 * /proc/self/fd/N, the openat of Node), so replacing a folder with a symlink between the check
 * and the use cannot redirect the access outside. The opened file's identity (dev + inode) must
 * be the one the check saw; FIFOs and devices are refused; a write never goes through a hard
 * link (nlink > 1) and lands via a temporary file renamed over the target in the same directory.
 * Linux (with /proc) is sound. Without /proc (Node has no openat) this narrows the window but
 * does not close it: the walk falls back to absolute paths with O_NOFOLLOW on each component, and
 * a walk from a folder held open (AnchoredPath) first checks once that its name still leads to the
 * held folder (dev + inode), refusing a folder swapped for a link since it was opened; but the
 * walk and the write after that check go by absolute path again, so a folder swapped for a link
 * between the check and them can still send the access outside. A folder
 * is removed the same way (AnchoredDir.removeDir): each sub-folder opened relative to its parent,
 * a link removed as a link, never followed.
 */
import { randomBytes } from "node:crypto";
import { constants, existsSync, type Dirent, type Stats } from "node:fs";
import {
  type FileHandle,
  lstat,
  mkdir,
  open,
  opendir,
  readdir,
  rename,
  rmdir,
  unlink,
} from "node:fs/promises";
import path from "node:path";
import { errorCode } from "../../core/missing-file.js";
import type { FileIdentity, ResolvedPath } from "./workspace-paths.js";

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;
const DIRECTORY_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
const FILE_READ_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK;

/** Where open directory handles can be named (Linux); undefined elsewhere. */
export const FD_DIRECTORY = existsSync("/proc/self/fd") ? "/proc/self/fd" : undefined;

/** Thrown when a path changed between its check and its use, or is not a plain file to touch. */
export class UnsafeFileError extends Error {
  override readonly name: string = "UnsafeFileError";
}

/** Thrown for a path that is a directory, pipe, socket or device where a regular file is needed. */
export class NotRegularFileError extends UnsafeFileError {
  override readonly name = "NotRegularFileError";
}

/**
 * Deepest folder nesting removeDir goes through: it holds every folder above the one it empties
 * open, and a folder nested thousands deep (no path length stops a walk relative to open folders)
 * would take as many file handles.
 */
const REMOVE_DEPTH_MAX = 100;

function swapped(shown: string): UnsafeFileError {
  return new UnsafeFileError(
    `${shown} changed while it was being used (a symbolic link or another file took its place); nothing was done`,
  );
}

/**
 * Most entries of one folder list_files and the search without ripgrep read (someEntries): reading
 * and sorting all of one a command filled with millions held the event loop for seconds.
 */
export const FOLDER_ENTRIES_READ = 10_000;

/** A directory held open; children are opened relative to it. */
export class AnchoredDir {
  private constructor(
    private readonly handle: FileHandle,
    /** Real absolute path the directory had when it was opened (for messages and the fallback). */
    readonly absolute: string,
  ) {}

  /** Open `root` (a real path from configuration) as the top of a walk. */
  static async openRoot(root: string): Promise<AnchoredDir> {
    return new AnchoredDir(await open(root, O_RDONLY | O_DIRECTORY), root);
  }

  /** A path naming this open directory itself. */
  get path(): string {
    return FD_DIRECTORY ? `${FD_DIRECTORY}/${this.handle.fd}` : this.absolute;
  }

  /** A path naming `name` inside this open directory, whatever has happened to its old path. */
  child(name: string): string {
    return `${this.path}/${name}`;
  }

  /**
   * A new handle on this same directory, to start a walk the walk closes. With /proc it is opened
   * through the held handle's own name there, so it is the held directory, wherever that was moved
   * and whatever took its old name: nothing to check. Without /proc it is opened by the name the
   * directory had, so it must be the held one (dev + inode), or the walk is refused: its folder was
   * swapped (for a link, say) since it was opened. That is checked once, here: the walk after it
   * goes by that name again, so a swap after the check is not caught (module header: narrowed, not
   * closed, without /proc).
   */
  async again(shown: string): Promise<AnchoredDir> {
    const reopened = new AnchoredDir(await open(this.child("."), DIRECTORY_FLAGS), this.absolute);
    if (FD_DIRECTORY) return reopened;
    let same = false;
    try {
      const [held, found] = await Promise.all([this.stat(), reopened.stat()]);
      same = held.dev === found.dev && held.ino === found.ino;
    } finally {
      if (!same) await reopened.close();
    }
    if (!same) throw swapped(shown);
    return reopened;
  }

  /** Open the sub-directory `name` without following a symlink there; `create` makes it when missing. */
  async openDir(name: string, shown: string, create = false): Promise<AnchoredDir> {
    const absolute = path.join(this.absolute, name);
    try {
      return new AnchoredDir(await open(this.child(name), DIRECTORY_FLAGS), absolute);
    } catch (error) {
      if (errorCode(error) === "ENOENT" && create) {
        await mkdir(this.child(name)).catch((made: unknown) => {
          if (errorCode(made) !== "EEXIST") throw made;
        });
        return this.openDir(name, shown, false);
      }
      if (errorCode(error) === "ENOTDIR" || errorCode(error) === "ELOOP") {
        const info = await lstat(this.child(name)).catch(() => undefined);
        if (info?.isSymbolicLink()) throw swapped(shown);
      }
      throw error;
    }
  }

  /**
   * Remove the sub-folder `name` and everything in it; nothing when it is missing. Every folder
   * below is opened relative to its parent following no link, and everything else is unlinked by
   * its name there, so a link inside is removed as a link, and `name` (or a folder below) swapped
   * for a link is refused (UnsafeFileError), never deleted through.
   */
  async removeDir(name: string, shown: string, depth = 0): Promise<void> {
    if (depth > REMOVE_DEPTH_MAX)
      throw new UnsafeFileError(`${shown} is nested over ${REMOVE_DEPTH_MAX} folders deep; not removed`);
    let dir: AnchoredDir;
    try {
      dir = await this.openDir(name, shown);
    } catch (error) {
      if (errorCode(error) === "ENOENT") return;
      throw error;
    }
    try {
      for (const entry of await dir.entries()) {
        const shownEntry = `${shown}/${entry.name}`;
        if (entry.isDirectory()) await dir.removeDir(entry.name, shownEntry, depth + 1);
        else await unlink(dir.child(entry.name));
      }
    } finally {
      await dir.close();
    }
    await rmdir(this.child(name));
  }

  /** Entries of this directory (names and types; symlinks are reported, not followed). */
  entries(): Promise<Dirent[]> {
    return readdir(this.path, { withFileTypes: true });
  }

  /**
   * At most `limit` entries of this directory, in the order it gives them, read no further (a
   * folder of millions, which a command makes in seconds, costs no more than that), and whether
   * it holds more.
   */
  async someEntries(limit: number): Promise<{ readonly entries: Dirent[]; readonly more: boolean }> {
    const entries: Dirent[] = [];
    for await (const entry of await opendir(this.path, { bufferSize: 1024 })) {
      if (entries.length === limit) return { entries, more: true };
      entries.push(entry);
    }
    return { entries, more: false };
  }

  /** Open the regular file `name` for reading without following a symlink; FIFOs, devices refused. */
  async openFile(name: string, shown: string): Promise<{ handle: FileHandle; stats: Stats }> {
    let handle: FileHandle;
    try {
      handle = await open(this.child(name), FILE_READ_FLAGS);
    } catch (error) {
      if (errorCode(error) === "ELOOP") throw swapped(shown);
      throw error;
    }
    const stats = await handle.stat();
    if (stats.isFile() || stats.isDirectory()) return { handle, stats };
    await handle.close();
    throw new NotRegularFileError(
      `${shown} is not a regular file (a pipe, socket or device); refusing to open it`,
    );
  }

  /** The open directory's own stats. */
  stat(): Promise<Stats> {
    return this.handle.stat();
  }

  /** Close the handle. */
  close(): Promise<void> {
    return this.handle.close();
  }
}

/**
 * A path below a folder held open (a plain relative path: no `.`, `..` or empty name), for a walk
 * that starts at that folder's handle rather than at a root named again.
 */
export interface AnchoredPath {
  readonly dir: AnchoredDir;
  readonly relative: string;
  /** How to show the path to the model and people. */
  readonly display: string;
}

/** The names from `file.root` down to `file.absolute` (empty for the root itself). */
function componentsOf(file: ResolvedPath): string[] {
  const relative = path.relative(file.root, file.absolute);
  return relative === "" ? [] : relative.split(path.sep);
}

/** Walk from `first` (closed by the walk) to the directory `names`, every step relative to the step before. */
async function walkTo(first: AnchoredDir, names: readonly string[], shown: string, create: boolean) {
  let dir = first;
  for (const name of names) {
    try {
      const next = await dir.openDir(name, shown, create);
      await dir.close();
      dir = next;
    } catch (error) {
      await dir.close();
      throw error;
    }
  }
  return dir;
}

function sameIdentity(stats: Stats, identity: FileIdentity | undefined): boolean {
  return identity === undefined || (stats.dev === identity.dev && stats.ino === identity.ino);
}

/** Run `use` with the checked path's parent directory held open; the directory is closed after. */
async function inParentDir<T>(
  file: ResolvedPath | AnchoredPath,
  use: (dir: AnchoredDir, name: string) => Promise<T>,
  create = false,
): Promise<T> {
  const names = "dir" in file ? file.relative.split("/") : componentsOf(file);
  // A walk from a held folder goes only down from it: `..` would climb out of it.
  if (names.some((name) => name === "" || name === "." || name === ".."))
    throw new UnsafeFileError(`${file.display} is not a plain path below its folder; nothing was done`);
  const name = names.pop();
  if (name === undefined) throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
  const first = "dir" in file ? await file.dir.again(file.display) : await AnchoredDir.openRoot(file.root);
  const dir = await walkTo(first, names, file.display, create);
  try {
    return await use(dir, name);
  } finally {
    await dir.close();
  }
}

/**
 * Open the checked directory `file` itself (for listing and searching, or a writer working inside
 * it relative to its handle), or throw. `create`: the folders missing on its way, and the folder
 * itself, are made, each relative to the open folder above it, following no link (a missing path
 * passes the check, paths.resolve, with no identity to hold it to).
 */
export async function openCheckedDir(
  file: ResolvedPath,
  options: { readonly create?: boolean } = {},
): Promise<AnchoredDir> {
  const first = await AnchoredDir.openRoot(file.root);
  const dir = await walkTo(first, componentsOf(file), file.display, options.create ?? false);
  if (sameIdentity(await dir.stat(), file.identity)) return dir;
  await dir.close();
  throw swapped(file.display);
}

/**
 * Open the checked path read-only: a regular file or a directory, the same one the check saw.
 * The caller closes the handle.
 */
export async function openChecked(file: ResolvedPath): Promise<{ handle: FileHandle; stats: Stats }> {
  if (componentsOf(file).length === 0) {
    const handle = await open(file.root, O_RDONLY | O_DIRECTORY);
    return { handle, stats: await handle.stat() };
  }
  return inParentDir(file, async (dir, name) => {
    const opened = await dir.openFile(name, file.display);
    if (sameIdentity(opened.stats, file.identity)) return opened;
    await opened.handle.close();
    throw swapped(file.display);
  });
}

/**
 * The open file's first `size` bytes (fewer when it is shorter): a read no further than the size
 * a check judged, though the file may have grown since (a command of the agent appending to it).
 */
export async function readUpTo(handle: FileHandle, size: number): Promise<Buffer> {
  const buffer = Buffer.alloc(size);
  const { bytesRead } = await handle.read(buffer, 0, size, 0);
  return buffer.subarray(0, bytesRead);
}

/** The file's current bytes; undefined when it does not exist; only its size when over `maxBytes`. */
export async function readIfExists(
  file: ResolvedPath,
  maxBytes: number,
): Promise<Buffer | number | undefined> {
  try {
    const { handle, stats } = await openChecked(file);
    try {
      if (stats.isDirectory()) throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
      if (stats.size > maxBytes) return stats.size;
      return await readUpTo(handle, stats.size);
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (errorCode(error) === "ENOENT") return undefined;
    throw error;
  }
}

/**
 * Write `data` as the whole new content of the checked path (or of a path below a folder held
 * open, the walk starting at its handle): parents are created, the target
 * must be a regular file with no other hard link (or missing), and the bytes land in a temporary
 * file in the same directory renamed over the target. Returns whether a file was replaced.
 * `createMode`: the mode bits a new file is created with (the umask applies), given at its
 * exclusive, link-refusing creation, so no later open sets them; a replaced file keeps its own.
 */
export async function writeChecked(
  file: ResolvedPath | AnchoredPath,
  data: string | Uint8Array,
  createMode = 0o666,
): Promise<boolean> {
  const shown = file.display;
  return inParentDir(
    file,
    async (dir, name) => {
      const existing = await lstat(dir.child(name)).catch((error: unknown) => {
        if (errorCode(error) === "ENOENT") return undefined;
        throw error;
      });
      const identity = "identity" in file ? file.identity : undefined;
      if (existing?.isSymbolicLink() || (existing && !sameIdentity(existing, identity))) throw swapped(shown);
      if (existing?.isDirectory()) throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
      if (existing && !existing.isFile())
        throw new UnsafeFileError(`${shown} is not a regular file; refusing to write it`);
      if (existing && existing.nlink > 1)
        throw new UnsafeFileError(
          `${shown} has ${existing.nlink} hard links, so other paths (possibly outside the workspace) share its content; refusing to write through it`,
        );
      // Not named after the target: a target name near the file system's 255-byte limit must still fit.
      const temp = `.coworker-${randomBytes(6).toString("hex")}.tmp`;
      const mode = existing ? existing.mode & 0o7777 : createMode;
      const handle = await open(dir.child(temp), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
      try {
        try {
          await handle.writeFile(data);
          if (existing) await handle.chmod(mode);
          await handle.sync();
        } finally {
          await handle.close();
        }
        await rename(dir.child(temp), dir.child(name));
      } catch (error) {
        await unlink(dir.child(temp)).catch(() => undefined);
        throw error;
      }
      return existing !== undefined;
    },
    true,
  );
}
