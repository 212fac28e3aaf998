/**
 * What a sandboxed command sees of uploads/: only its own conversation's folders, as the file
 * tools see it (files/conversation-paths.ts has the rule). The sandbox covers the uploads folder
 * with an empty read-only one and binds back, read-write, the conversation's folder — made on the
 * host first when missing, so `ls uploads` shows it and a command can keep files beside the ones
 * people sent — and the per-session folders its threads had before that layout. A folder that is
 * a link is never bound back: it could point at another conversation's.
 */
import { mkdir, readdir } from "node:fs/promises";
import path from "node:path";
import { isWithin } from "../../core/real-paths.js";
import type { ThreadTarget } from "../../core/thread-target.js";
import { conversationUploadFolder, isConversationUploadFolder } from "../../core/upload-folders.js";
import { uploadsFolder } from "../files/conversation-paths.js";
import type { WorkspacePaths } from "../files/workspace-paths.js";
import { exists } from "../files/path-exists.js";
import type { MaskedFolder } from "./sandbox-backend.js";

/**
 * The uploads folder masked for a command of `target`'s conversation (none of it kept without a
 * target); undefined when the workspace is missing (no command starts there) or the uploads folder
 * lies in no root (no command sees it anyway).
 */
export async function uploadsMask(
  paths: WorkspacePaths,
  target: ThreadTarget | undefined,
): Promise<MaskedFolder | undefined> {
  const [uploads, roots] = await Promise.all([uploadsFolder(paths), paths.realRoots()]);
  const [workspace] = roots;
  if (workspace === undefined || !(await exists(workspace))) return undefined;
  if (!roots.some((root) => isWithin(uploads, root))) return undefined;
  if (target === undefined) {
    await mkdir(uploads, { recursive: true });
    return { path: uploads, keep: [] };
  }
  await mkdir(path.join(uploads, conversationUploadFolder(target)), { recursive: true });
  const keep = (await readdir(uploads, { withFileTypes: true }))
    .filter((entry) => entry.isDirectory() && isConversationUploadFolder(entry.name, target))
    .map((entry) => path.join(uploads, entry.name));
  return { path: uploads, keep };
}
