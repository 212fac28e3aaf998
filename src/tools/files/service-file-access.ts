/**
 * How the service itself touches files in the workspace: the files people send (saved by the
 * channels, read back for the model, their PDF text extracted beside them), AGENTS.md, and the files
 * send_file uploads. The service runs outside the sandbox, while
 * the agent's shell may change anything in the workspace: a folder on the way may have become a
 * symbolic link to anywhere (uploads/<session> → ~/.ssh), or the file's own name one (Telegram
 * message ids are predictable). So the service confines such a path as the file tools do (inside
 * the workspace, never its own data or configuration) and then opens or writes it by the anchored
 * walk (anchored-fs.ts): no link is followed, a write lands via a temporary file renamed into
 * place, and a read is of the very file the check saw.
 */
import type { Stats } from "node:fs";
import { mkdir } from "node:fs/promises";
import {
  FD_DIRECTORY,
  NotRegularFileError,
  openChecked,
  UnsafeFileError,
  writeChecked,
} from "./anchored-fs.js";
import { CredentialFileError } from "./credential-paths.js";
import { PathOutsideWorkspaceError, type ResolvedPath, type WorkspacePaths } from "./workspace-paths.js";

/**
 * Why a path was refused, in words for the person whose file it was; undefined for an error that
 * is not a refusal (a failed disk, a full folder).
 */
export function refusalReason(error: unknown): string | undefined {
  if (error instanceof CredentialFileError)
    return "it is named like a credential file (a private key, .env, …), and credentials stay out of the workspace";
  if (error instanceof PathOutsideWorkspaceError || error instanceof UnsafeFileError)
    return `its place in the workspace is not safe to write (${error.message})`;
  return undefined;
}

/**
 * Write `data` as the file at workspace-relative `relative`; the workspace folder and the parents
 * are made when missing. Throws when the path is unsafe.
 */
export async function saveInWorkspace(
  workspace: WorkspacePaths,
  relative: string,
  data: Uint8Array | string,
): Promise<void> {
  await mkdir(workspace.root, { recursive: true });
  await writeChecked(await workspace.resolve(relative), data);
}

/**
 * Run `use` on the regular file at workspace-relative `relative`, held open meanwhile (with the
 * path as checked, for display): the path `use` gets names that open file (`/proc/self/fd/N`; its checked path where there is no /proc),
 * so whatever replaces the file's path in between is never read. Throws when the path is unsafe
 * or not a regular file.
 */
export async function withWorkspaceFile<T>(
  workspace: WorkspacePaths,
  relative: string,
  use: (path: string, stats: Stats, resolved: ResolvedPath) => Promise<T>,
): Promise<T> {
  const resolved = await workspace.resolve(relative);
  const { handle, stats } = await openChecked(resolved);
  try {
    if (!stats.isFile()) throw new NotRegularFileError(`${resolved.display} is not a regular file`);
    return await use(FD_DIRECTORY ? `${FD_DIRECTORY}/${handle.fd}` : resolved.absolute, stats, resolved);
  } finally {
    await handle.close();
  }
}
